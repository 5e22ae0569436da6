import { bucketOf } from "../src/core/buckets.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { bulkLoadPending, checkCounters } from "./lib/backlog.js";
import { DAY, HOUR, backlogFile, scratchCopy } from "./lib/data.js";
import { drainWithScheduler } from "./lib/drain.js";
import { rawDrain } from "./lib/raw-drain.js";
import { rate, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";

/**
 * Catch-up after downtime: overdue jobs spread over the last N days of hour buckets (all
 * before the current hour), on top of the shared future backlog, none staged yet: what a
 * scheduler finds when it restarts after an outage. A started Scheduler (defaults) drains
 * them; the handler checks they come oldest bucket first. Baseline: the raw claim + settle
 * loop in bucket order on a copy of the same file.
 */
export async function catchUp(sizes: Sizes): Promise<BenchResult> {
  const n = sizes.catchUpJobs;
  const { path } = await backlogFile(sizes.backlog);
  const main = scratchCopy(path, "catch-up");
  try {
    const prep = new SqliteStore({ path: main.path });
    const currentHour = bucketOf(Date.now(), HOUR);
    const dueFrom = currentHour - sizes.catchUpDays * DAY;
    await bulkLoadPending(prep, {
      count: n,
      dueFrom,
      spanMs: sizes.catchUpDays * DAY,
      label: `catch-up: loading ${count(n)} overdue jobs`,
    });
    const check = checkCounters(prep.connection);
    if (!check.ok) throw new Error("catch-up: counters inconsistent after the load");
    const buckets = prep.connection
      .prepare(`SELECT count(*) FROM bucket_counts WHERE bucket < ?`)
      .pluck()
      .get(currentHour) as number;
    prep.connection.pragma("wal_checkpoint(TRUNCATE)");
    await prep.close();

    const base = scratchCopy(main.path, "catch-up-baseline");
    let baseline: number;
    let baseRegressions = 0;
    try {
      const store = new SqliteStore({ path: base.path });
      let maxBucket = -Infinity;
      try {
        baseline = rawDrain(store.connection, {
          expected: n,
          until: Date.now(),
          label: "baseline: raw claim + settle",
          handler: (r) => {
            if (r.bucket < maxBucket) baseRegressions++;
            else maxBucket = r.bucket;
          },
        });
      } finally {
        await store.close();
      }
    } finally {
      base.remove();
    }

    const run = await drainWithScheduler(main.path, n, "scheduler: caught up");
    return {
      name: "catch-up",
      title: `Catch-up: ${count(n)} overdue jobs over ${sizes.catchUpDays} days (${buckets} hour buckets), ${count(sizes.backlog)} future backlog`,
      goals: [
        {
          metric: "drain rate (start to all settled)",
          value: rate(run.rate),
          goal: ">= 50,000/s",
          baseline: rate(baseline),
          ratio: ratio(run.rate, baseline),
          pass: run.rate >= 50_000,
        },
        {
          metric: "drain rate, sustained (10% to 90%)",
          value: rate(run.sustained),
          goal: ">= 50,000/s",
          baseline: rate(baseline),
          ratio: ratio(run.sustained, baseline),
          pass: run.sustained >= 50_000,
        },
        {
          metric: "fired out of bucket order (older after newer)",
          value: String(run.log.bucketRegressions),
          goal: "0",
          baseline: String(baseRegressions),
          ratio: "-",
          pass: run.log.bucketRegressions === 0,
        },
        {
          metric: "lost / duplicated",
          value: `${n - run.log.distinct} / ${run.log.duplicates}`,
          goal: "0 / 0",
          baseline: "-",
          ratio: "-",
          pass: run.log.distinct === n && run.log.duplicates === 0 && run.succeeded === n,
        },
      ],
      details: [
        run.calls.table("Store calls while catching up (time each held the event loop)", n),
      ],
      notes: [
        `${run.seconds.toFixed(1)} s from start() to the last settlement (staging included); ${run.succeeded.toLocaleString("en-US")} recorded as succeeded`,
        "baseline: plain better-sqlite3, 500 jobs in bucket order through jobs_bucket per claim transaction (a lease row each), one settle transaction per batch (an outcome row each), the store's tables and indexes",
      ],
    };
  } finally {
    main.remove();
  }
}
