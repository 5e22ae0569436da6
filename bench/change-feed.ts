import Fastify from "fastify";
import pino from "pino";
import { Scheduler } from "../src/api/scheduler.js";
import { parseChangeCursor } from "../src/core/change.js";
import { dashboardPlugin } from "../src/dashboard/plugin.js";
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
 * of 1000 (Store.jobsList, the due-time order a reader of jobs would page in). Then the same
 * changes delivered over real HTTP on 127.0.0.1 by the live stream (`GET /v1/events?after=0`,
 * the dashboard plugin's FeedFollowers reading pages of 500), counted as the client parses
 * its `job` frames; its baseline is the feed read above.
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
    note(`change-feed: streaming ${count(n)} changes over GET /v1/events`);
    const sse = await streamRate(store, n);
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
        {
          metric: "SSE delivery (GET /v1/events from the start)",
          value: rate(sse.rate),
          goal: "-",
          baseline: rate(feedRate),
          ratio: ratio(sse.rate, feedRate),
          pass: sse.received === n ? null : false,
        },
      ],
      details: [],
      notes: [
        `read ${read} changes, listed ${listed} jobs; baseline: jobsList pages of the same jobs`,
        `SSE: ${sse.received} job events received over loopback HTTP; baseline: the feed read row`,
      ],
    };
  } finally {
    await store.close();
    file.remove();
  }
}

/** Changes per second `GET /v1/events?after=0` delivers to one client, until `n` arrived. */
async function streamRate(
  store: SqliteStore,
  n: number,
): Promise<{ rate: number; received: number }> {
  const scheduler = new Scheduler({ store, logger: pino({ level: "silent" }) });
  const app = Fastify({ logger: false });
  await app.register(dashboardPlugin, { scheduler, authenticate: async () => "default" });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const abort = new AbortController();
  try {
    const address = app.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    const t = performance.now();
    const res = await fetch(`http://127.0.0.1:${address.port}/v1/events?after=0`, {
      signal: abort.signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = 0;
    let buffer = "";
    while (received < n) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const frames = buffer.split("\n\n");
      buffer = frames.pop()!;
      for (const f of frames) if (f.includes("event: job\n")) received++;
    }
    return { rate: received / ((performance.now() - t) / 1000), received };
  } finally {
    abort.abort();
    await app.close();
  }
}
