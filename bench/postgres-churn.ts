import { PartitionMaintenance } from "../src/stores/postgres/partition-maintenance.js";
import { rate, type BenchResult } from "./lib/report.js";
import {
  DAY,
  benchStore,
  dropStore,
  jobFactory,
  mib,
  statementCount,
  tableBytes,
  type PgSizes,
} from "./postgres-common.js";

const BATCH = 1000;

/**
 * Fire and forget a million: `churnJobs` jobs due two to four days ago are claimed and
 * settled (succeeded) by two workers in batches of 1,000, as fast as the store allows (the
 * store's part of dispatch throughput, no engine); then partition maintenance runs. Reports
 * the rate, statements per fired job, and the live tables' sizes before, full and after:
 * fired rows leave with their partitions, so there is no bloat to vacuum.
 */
export async function pgChurn(sizes: PgSizes): Promise<BenchResult> {
  const store = await benchStore("churn", 3, { onDemandBehindMs: 7 * DAY });
  try {
    const now = Date.now();
    const maintenance = new PartitionMaintenance(store, { aheadBuckets: 3 });
    const sizesAt = async () => [
      await tableBytes(store, "jobs_live"),
      await tableBytes(store, "jobs_claimed"),
      await tableBytes(store, "jobs_history"),
    ];
    const empty = await sizesAt();
    const make = jobFactory(store);
    for (let i = 0; i < sizes.churnJobs; i += 10_000) {
      const n = Math.min(10_000, sizes.churnJobs - i);
      await store.jobsInsert({
        jobs: Array.from({ length: n }, (_, k) =>
          make(now - 4 * DAY + Math.floor(((i + k) / sizes.churnJobs) * 2 * DAY)),
        ),
        now,
      });
    }
    await store.connection.query(`ANALYZE "${store.schema}".jobs_live`);
    const full = await sizesAt();
    const s0 = await statementCount(store);
    const t0 = performance.now();
    let fired = 0;
    await Promise.all(
      [0, 1].map(async (w) => {
        for (;;) {
          const batch = await store.jobsClaimDue({
            now,
            dueBefore: now,
            limit: BATCH,
            leaseMs: 60_000,
            owner: `w${w}`,
          });
          if (batch.length === 0) return;
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
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    const s1 = await statementCount(store);
    if (fired !== sizes.churnJobs) throw new Error(`fired ${fired}, expected ${sizes.churnJobs}`);
    const afterFire = await sizesAt();
    const m = await maintenance.runOnce(now);
    const after = await sizesAt();
    // jobs_claimed only ever holds work in flight: a plain VACUUM (autovacuum's job) gives
    // its emptied pages back
    await store.connection.query(`VACUUM "${store.schema}".jobs_claimed`);
    const vacuumed = await sizesAt();
    const row = (label: string, v: number[]) => [label, mib(v[0]!), mib(v[1]!), mib(v[2]!)];
    return {
      name: "postgres-churn",
      title: `PostgreSQL fire ${sizes.churnJobs.toLocaleString("en-US")} due jobs (claim + settle, 2 workers, batches of ${BATCH})`,
      goals: [
        {
          metric: "fired/s (store only)",
          value: rate(fired / secs),
          goal: "-",
          baseline: "-",
          ratio: "-",
          pass: null,
        },
        {
          metric: "statements per fired job",
          value: ((s1.n - s0.n) / fired).toFixed(4),
          goal: "-",
          baseline: "-",
          ratio: "-",
          pass: null,
        },
        {
          metric: "jobs_live after maintenance vs empty",
          value: mib(after[0]!),
          goal: "about the starting size",
          baseline: mib(empty[0]!),
          ratio: "-",
          pass: after[0]! <= empty[0]! * 2 + 1_000_000,
        },
      ],
      details: [
        {
          title: "#### Table sizes (with indexes)",
          headers: ["when", "jobs_live", "jobs_claimed", "jobs_history"],
          rows: [
            row("empty", empty),
            row(`${sizes.churnJobs.toLocaleString("en-US")} pending`, full),
            row("all fired", afterFire),
            row(`after maintenance (dropped ${m.dropped.length})`, after),
            row("after VACUUM of jobs_claimed", vacuumed),
          ],
        },
      ],
      notes: ["history keeps the fired jobs until retention drops their partitions (historyPurge)"],
    };
  } finally {
    await dropStore(store);
  }
}
