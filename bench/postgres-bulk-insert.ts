import type { NewJob } from "../src/core/job.js";
import { rate, ratio, type BenchResult } from "./lib/report.js";
import {
  DAY,
  benchStore,
  dropStore,
  jobFactory,
  mib,
  tableBytes,
  type PgSizes,
} from "./postgres-common.js";

const BATCH = 10_000;

/**
 * Bulk schedule: `bulkJobs` jobs due at random over the next 30 days (day partitions),
 * through PostgresStore.jobsInsert in batches of 10,000 (one unnest INSERT each, one
 * transaction each), by one writer and by two writers at once. Job objects are built
 * before the clock starts; the rate counts only the store. Reports the rate of the first
 * and last tenth too: it should hold as the table grows.
 */
export async function pgBulkInsert(sizes: PgSizes): Promise<BenchResult> {
  const rows: (string | number)[][] = [];
  let best = 0;
  for (const writers of [1, 2]) {
    const store = await benchStore(`bulk${writers}`);
    try {
      const make = jobFactory();
      const now = Date.now();
      const batches: NewJob[][] = [];
      for (let i = 0; i < sizes.bulkJobs; i += BATCH) {
        const n = Math.min(BATCH, sizes.bulkJobs - i);
        batches.push(
          Array.from({ length: n }, () =>
            make(now + 60_000 + Math.floor(Math.random() * 30 * DAY)),
          ),
        );
      }
      const times: number[] = new Array<number>(batches.length);
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: writers }, async () => {
          for (;;) {
            const i = next++;
            const batch = batches[i];
            if (!batch) return;
            const t = performance.now();
            await store.jobsInsert({ jobs: batch, now });
            times[i] = performance.now() - t;
          }
        }),
      );
      const secs = (performance.now() - t0) / 1000;
      const overall = sizes.bulkJobs / secs;
      best = Math.max(best, overall);
      const tenth = Math.max(1, Math.floor(batches.length / 10));
      const rateOf = (ts: number[]) =>
        (ts.length * BATCH * writers) / (ts.reduce((a, b) => a + b, 0) / 1000);
      rows.push([
        writers,
        rate(overall),
        rate(rateOf(times.slice(0, tenth))),
        rate(rateOf(times.slice(-tenth))),
        mib(await tableBytes(store, "jobs_live")),
        (await store.partitions.list("jobs_live")).length,
      ]);
    } finally {
      await dropStore(store);
    }
  }
  return {
    name: "postgres-bulk-insert",
    title: `PostgreSQL bulk schedule: ${sizes.bulkJobs.toLocaleString("en-US")} jobs over 30 days, ${BATCH.toLocaleString("en-US")} per statement`,
    goals: [
      {
        metric: "jobs/s (best of 1 and 2 writers)",
        value: rate(best),
        goal: ">= 50,000/s",
        baseline: "-",
        ratio: ratio(best, 50_000),
        pass: sizes.scale === "full" ? best >= 50_000 : null,
      },
    ],
    details: [
      {
        title: "#### By writers",
        headers: ["writers", "overall", "first 10%", "last 10%", "jobs_live size", "partitions"],
        rows,
      },
    ],
    notes: [
      "fsync and synchronous_commit on; each batch is one INSERT ... SELECT FROM unnest(...) and one commit",
      "counters are kept by a statement trigger: one upsert per (bucket, tenant) per batch",
    ],
  };
}
