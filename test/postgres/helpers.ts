import type { NewJob } from "../../src/core/job.js";
import type { Store } from "../../src/store/store.js";

export { jobMaker } from "../support/jobs.js";

/** Inserts in batches of `batch`. */
export async function insertAll(store: Store, jobs: NewJob[], now: number, batch = 10_000) {
  for (let i = 0; i < jobs.length; i += batch) {
    await store.jobsInsert({ jobs: jobs.slice(i, i + batch), now });
  }
}

/** Claims everything due at `now` and settles it as succeeded; returns how many fired. */
export async function fireAll(store: Store, now: number, owner = "n"): Promise<number> {
  let fired = 0;
  for (;;) {
    const batch = await store.jobsClaimDue({
      now,
      dueBefore: now,
      limit: 1000,
      leaseMs: 60_000,
      owner,
    });
    if (batch.length === 0) return fired;
    await store.jobsSettle({
      now,
      settlements: batch.map((j) => ({
        id: j.id,
        fence: j.fence,
        firedAt: now,
        outcome: "succeeded" as const,
        result: null,
      })),
    });
    fired += batch.length;
  }
}
