import { PartitionMaintenance } from "../src/stores/postgres/partition-maintenance.js";
import type { PostgresStore } from "../src/stores/postgres/postgres-store.js";
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
 * Fire and forget a million, in two rounds of half: each round schedules its jobs due two
 * to four days ago, two workers claim and settle them (succeeded) in batches of 1,000 as
 * fast as the store allows (the store's part of dispatch throughput, no engine), then
 * partition maintenance runs (drops the emptied past partitions, vacuums jobs_claimed).
 * Reports the rate, statements per fired job and the tables' sizes: jobs_live returns to
 * its empty size (fired rows leave with their partitions) and jobs_claimed stays the same
 * size from one round to the next (bounded, not growing with the jobs fired).
 */
export async function pgChurn(sizes: PgSizes): Promise<BenchResult> {
  const store = await benchStore("churn", 3, { onDemandBehindMs: 7 * DAY });
  try {
    const now = Date.now();
    const maintenance = new PartitionMaintenance(store.context, { aheadBuckets: 3 });
    const sizesAt = async () => [
      await tableBytes(store, "jobs_live"),
      await tableBytes(store, "jobs_claimed"),
      await tableBytes(store, "jobs_history"),
    ];
    const row = (label: string, v: number[]) => [label, mib(v[0]!), mib(v[1]!), mib(v[2]!)];
    const empty = await sizesAt();
    const rows = [row("empty", empty)];
    const half = Math.floor(sizes.churnJobs / 2);
    let fired = 0;
    let secs = 0;
    let statementsUsed = 0;
    let after: number[] = empty;
    for (const round of [1, 2]) {
      await schedule(store, half, now);
      rows.push(row(`round ${round}: ${half.toLocaleString("en-US")} pending`, await sizesAt()));
      const s0 = await statementCount(store);
      const t0 = performance.now();
      const n = await fireAll(store, now);
      secs += (performance.now() - t0) / 1000;
      statementsUsed += (await statementCount(store)).n - s0.n;
      if (n !== half) throw new Error(`round ${round} fired ${n}, expected ${half}`);
      fired += n;
      rows.push(row(`round ${round}: all fired`, await sizesAt()));
      const m = await maintenance.runOnce(now);
      after = await sizesAt();
      rows.push(row(`round ${round}: after maintenance (dropped ${m.dropped.length})`, after));
    }
    return {
      name: "postgres-churn",
      title: `PostgreSQL fire ${fired.toLocaleString("en-US")} due jobs (claim + settle, 2 workers, batches of ${BATCH}, two rounds)`,
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
          value: (statementsUsed / fired).toFixed(4),
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
          rows,
        },
      ],
      notes: [
        "jobs_claimed holds work in flight; its pages are reused after each vacuum, so its size follows the fire rate times the vacuum interval, not the jobs fired",
        "history keeps the fired jobs until retention drops their partitions (historyPurge)",
      ],
    };
  } finally {
    await dropStore(store);
  }
}

async function schedule(store: PostgresStore, count: number, now: number): Promise<void> {
  const make = jobFactory();
  for (let i = 0; i < count; i += 10_000) {
    const n = Math.min(10_000, count - i);
    await store.jobsInsert({
      jobs: Array.from({ length: n }, (_, k) =>
        make(now - 4 * DAY + Math.floor(((i + k) / count) * 2 * DAY)),
      ),
      now,
    });
  }
  await store.connection.query(`ANALYZE "${store.schema}".jobs_live`);
}

async function fireAll(store: PostgresStore, now: number): Promise<number> {
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
  return fired;
}
