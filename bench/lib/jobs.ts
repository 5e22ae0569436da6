import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import { validateScheduleInput, type ScheduleInput } from "../../src/core/schedule-input.js";
import type { Store } from "../../src/store/store.js";

/**
 * Builds NewJobs the way the Scheduler does (validateScheduleInput), for benchmarks that
 * write through the store directly: `dueAt(i)` gives the i-th job's due time.
 */
export function newJobs(
  store: Store,
  n: number,
  dueAt: (i: number) => number,
  target = "noop",
): NewJob[] {
  const now = Date.now();
  const ctx = {
    now,
    newId: createIdGenerator(),
    bucketWidthMs: store.bucketWidthMs,
    shardCount: store.shardCount,
    defaultTenant: "default",
    defaultMaxAttempts: 3,
    maxPayloadBytes: 65_536,
    maxPastMs: null,
  };
  const out: NewJob[] = [];
  for (let i = 0; i < n; i++) {
    const input: ScheduleInput = { dueAt: dueAt(i), target, payload: { n: i } };
    out.push(validateScheduleInput(input, ctx));
  }
  return out;
}

/** Inserts jobs through the store's own bulk path, 10k per transaction. */
export async function insertJobs(store: Store, jobs: readonly NewJob[]): Promise<void> {
  for (let i = 0; i < jobs.length; i += 10_000) {
    await store.jobsInsert({ jobs: jobs.slice(i, i + 10_000), now: Date.now() });
  }
}
