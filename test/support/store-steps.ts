import type { Job } from "../../src/core/job.js";
import type { Operation } from "../../src/core/operation.js";
import type { PauseStore } from "../../src/store/pause-store.js";
import type { Store } from "../../src/store/store.js";

/**
 * Store calls the contract suite repeats, made the way the engine makes them: a claim of
 * everything due, a pause keeper's passes to the end, an operation's batches to the end.
 */

const HOUR = 3_600_000;

/** Stages the next hour and claims every job due at `now` (up to 1,000), as node "n". */
export async function claimAllDue(store: Store, now: number, leaseMs = 30_000): Promise<Job[]> {
  await store.bucketsStage({ until: now + HOUR, maxRows: 100_000 });
  return store.jobsClaimDue({ now, dueBefore: now, limit: 1000, leaseMs, owner: "n" });
}

/** Runs the pauses' passes of `limit` jobs until none has work left. */
export async function pausesWorkAll(pauses: PauseStore, now: number, limit: number) {
  for (let i = 0; i < 1000; i++) {
    if (!(await pauses.pausesWork({ now, limit })).more) return;
  }
  throw new Error("pause work never ended");
}

/** Runs an operation's batches of `limit` jobs to its end: the final record, the batches run. */
export async function operationRunAll(
  store: Store,
  id: string,
  limit: number,
  now: number,
): Promise<{ op: Operation; batches: number }> {
  for (let batches = 1; ; batches++) {
    const r = await store.operationStep({ id, now, limit });
    if (!r) throw new Error(`operation ${id} not found`);
    if (r.operation.state !== "running" && r.operation.state !== "queued") {
      return { op: r.operation, batches };
    }
  }
}
