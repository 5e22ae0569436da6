import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { backlogFile, scratchCopy } from "./lib/data.js";
import { drainWithScheduler } from "./lib/drain.js";
import { insertJobs, newJobs } from "./lib/jobs.js";
import { note } from "./lib/progress.js";
import { rawDrain } from "./lib/raw-drain.js";
import { rate, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";

/**
 * Dispatch throughput: jobs already due (spread over the last 10 minutes), on top of the
 * shared pending backlog, fired by a started Scheduler (defaults: claim batch 500,
 * concurrency 100) into a no-op handler, measured from start() until every job is fired
 * and its success recorded. Baseline: the least SQL work per job with plain better-sqlite3
 * on a copy of the same file (lib/raw-drain.ts).
 */
export async function dispatchThroughput(sizes: Sizes): Promise<BenchResult> {
  const n = sizes.dispatchJobs;
  const { path } = await backlogFile(sizes.backlog);
  const main = scratchCopy(path, "dispatch");
  try {
    const prep = new SqliteStore({ path: main.path });
    const now = Date.now();
    note(`dispatch: inserting ${count(n)} due jobs`);
    await insertJobs(
      prep,
      newJobs(prep, n, (i) => now - 1 - Math.floor((i * 600_000) / n)),
    );
    prep.connection.pragma("wal_checkpoint(TRUNCATE)");
    await prep.close();

    const base = scratchCopy(main.path, "dispatch-baseline");
    let baseline: number;
    try {
      const store = new SqliteStore({ path: base.path });
      try {
        baseline = rawDrain(store.connection, {
          expected: n,
          until: Date.now(),
          label: "baseline: raw claim + settle",
          handler: () => undefined,
        });
      } finally {
        await store.close();
      }
    } finally {
      base.remove();
    }

    const run = await drainWithScheduler(main.path, n, "scheduler: fired");
    return {
      name: "dispatch-throughput",
      title: `Dispatch throughput: ${count(n)} due jobs, ${count(sizes.backlog)} pending backlog, no-op handler`,
      goals: [
        {
          metric: "sustained (10% to 90% fired)",
          value: rate(run.sustained),
          goal: ">= 20,000/s",
          baseline: rate(baseline),
          ratio: ratio(run.sustained, baseline),
          pass: run.sustained >= 20_000,
        },
        {
          metric: "overall (start to all settled)",
          value: rate(run.rate),
          goal: ">= 20,000/s",
          baseline: rate(baseline),
          ratio: ratio(run.rate, baseline),
          pass: run.rate >= 20_000,
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
      details: [run.calls.table("Store calls while firing (time each held the event loop)", n)],
      notes: [
        `${run.seconds.toFixed(1)} s from start() to the last settlement; ${run.succeeded.toLocaleString("en-US")} recorded as succeeded`,
        "baseline: plain better-sqlite3, 500 jobs through jobs_bucket per claim transaction (a lease row each), one settle transaction per batch (an outcome row each), the store's tables and indexes",
      ],
    };
  } finally {
    main.remove();
  }
}
