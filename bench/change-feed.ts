import { parseChangeCursor } from "../src/core/change.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { scratchPath } from "./lib/data.js";
import { insertJobs, newJobs } from "./lib/jobs.js";
import { note } from "./lib/progress.js";
import { rate, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";

/**
 * Change feed read throughput on SQLite: the `scheduled` changes of `dispatchJobs` jobs of
 * one tenant, read in pages of 1000 from the start (Store.changesRead, each page resuming
 * from the last one's cursor). Baseline, same run and file: listing the same jobs in pages
 * of 1000 (Store.jobsList, the due-time order a reader of jobs would page in).
 */
export async function changeFeed(sizes: Sizes): Promise<BenchResult> {
  const n = sizes.dispatchJobs;
  const file = scratchPath("change-feed");
  const store = new SqliteStore({ path: file.path });
  try {
    const now = Date.now();
    note(`change-feed: inserting ${count(n)} jobs`);
    await insertJobs(
      store,
      newJobs(store, n, (i) => now + 3_600_000 + i),
    );
    let t = performance.now();
    let read = 0;
    let after: string | undefined;
    for (;;) {
      const page = await store.changesRead({
        tenant: "default",
        ...(after === undefined ? {} : { after: parseChangeCursor(after) }),
        limit: 1000,
      });
      read += page.changes.length;
      after = page.next;
      if (page.changes.length < 1000) break;
    }
    const feedRate = read / ((performance.now() - t) / 1000);
    t = performance.now();
    let listed = 0;
    let pos: { dueAt: number; id: string } | undefined;
    for (;;) {
      const jobs = await store.jobsList({
        tenant: "default",
        limit: 1000,
        ...(pos ? { after: pos } : {}),
      });
      listed += jobs.length;
      const last = jobs[jobs.length - 1];
      if (!last || jobs.length < 1000) break;
      pos = { dueAt: last.dueAt, id: last.id };
    }
    const listRate = listed / ((performance.now() - t) / 1000);
    return {
      name: "change-feed",
      title: `Change feed read throughput (SQLite, ${count(n)} changes, pages of 1000)`,
      goals: [
        {
          metric: "feed read (changesRead)",
          value: rate(feedRate),
          goal: "-",
          baseline: rate(listRate),
          ratio: ratio(feedRate, listRate),
          pass: read === n ? null : false,
        },
      ],
      details: [],
      notes: [
        `read ${read} changes, listed ${listed} jobs; baseline: jobsList pages of the same jobs`,
      ],
    };
  } finally {
    await store.close();
    file.remove();
  }
}
