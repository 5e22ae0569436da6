import { monitorEventLoopDelay } from "node:perf_hooks";
import { Scheduler } from "../src/api/scheduler.js";
import type { ScheduleInput } from "../src/core/schedule-input.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { backlogFile, scratchCopy } from "./lib/data.js";
import { FiredLog } from "../src/cli/fired-log.js";
import { StoreCalls } from "./lib/store-calls.js";
import { note, Progress } from "./lib/progress.js";
import { fmt, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";
import { ascending, percentile, sleep } from "./lib/stats.js";

/**
 * Precision: jobs due evenly across a short window, on top of the shared pending backlog,
 * fired by a started Scheduler (real system clock, default options) into a no-op handler
 * that records calls. Lateness = wall time of the handler call - dueAt (ms, Date.now, the
 * engine's own clock). Early, lost and duplicated are counted per id.
 * Baseline: a bare setTimeout per job for the same schedule (same offsets from the window
 * start), in the same process after the scheduler has stopped: the runtime's own timer
 * lateness, which bounds any in-process scheduler.
 */
const LEAD_MS = 2000;
const GRACE_MS = 5000;

export async function precision(sizes: Sizes): Promise<BenchResult> {
  const n = sizes.precisionJobs;
  const windowMs = sizes.precisionWindowMs;
  const offset = (i: number): number => Math.floor((i * windowMs) / n);
  const { path } = await backlogFile(sizes.backlog);
  const copy = scratchCopy(path, "precision");
  const log = new FiredLog();
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  let scheduleMs: number;
  let calls: StoreCalls;
  let succeeded: number;
  try {
    const store = new SqliteStore({ path: copy.path });
    calls = new StoreCalls(store);
    const scheduler = new Scheduler({ store });
    scheduler.handle("noop", log.handler);
    try {
      scheduler.start();
      await sleep(200);
      const start = Date.now() + LEAD_MS;
      const inputs: ScheduleInput[] = Array.from({ length: n }, (_, i) => ({
        dueAt: start + offset(i),
        target: "noop",
        payload: { n: i },
      }));
      const t = performance.now();
      for (let i = 0; i < n; i += 10_000) await scheduler.scheduleMany(inputs.slice(i, i + 10_000));
      scheduleMs = performance.now() - t;
      if (Date.now() >= start)
        note(`precision: scheduling took ${scheduleMs.toFixed(0)} ms, past the lead`);
      loopDelay.enable();
      calls.start();
      const p = new Progress("precision: fired", n);
      const ticker = setInterval(() => p.update(log.distinct), 1000);
      await log.waitFor(n, start + windowMs + GRACE_MS - Date.now());
      await sleep(500); // let any duplicate show up
      loopDelay.disable();
      calls.stop();
      clearInterval(ticker);
      p.done();
      await scheduler.idle();
      succeeded = (await store.jobsCountByStatus({})).succeeded;
    } finally {
      await scheduler.close();
    }
  } finally {
    copy.remove();
  }
  const timer = await bareTimers(n, offset);

  const late = ascending(log.lateness);
  const p50 = percentile(late, 50);
  const p99 = percentile(late, 99);
  const max = late[late.length - 1] ?? NaN;
  const lost = n - log.distinct;
  return {
    name: "precision",
    title: `Precision: ${count(n)} jobs due across ${windowMs / 1000} s, ${count(sizes.backlog)} pending backlog, real clock`,
    goals: [
      {
        metric: "lateness p99",
        value: `${fmt(p99, 1)} ms`,
        goal: "<= 10 ms",
        baseline: `${fmt(timer.p99, 1)} ms`,
        ratio: ratio(p99, timer.p99),
        pass: p99 <= 10,
      },
      {
        metric: "lateness p50",
        value: `${fmt(p50, 1)} ms`,
        goal: "-",
        baseline: `${fmt(timer.p50, 1)} ms`,
        ratio: ratio(p50, timer.p50),
        pass: null,
      },
      {
        metric: "lateness max",
        value: `${fmt(max, 1)} ms`,
        goal: "-",
        baseline: `${fmt(timer.max, 1)} ms`,
        ratio: ratio(max, timer.max),
        pass: null,
      },
      zero("fired early (before dueAt)", log.early, String(timer.early)),
      zero("lost (never fired)", lost, "-"),
      zero("duplicated (extra handler calls)", log.duplicates, "-"),
    ],
    details: [
      {
        title: "Event-loop delay while firing (perf_hooks, 1 ms resolution)",
        headers: ["p50", "p99", "max"],
        rows: [[50, 99, 100].map((q) => `${fmt(loopDelay.percentile(q) / 1e6, 1)} ms`)],
      },
      calls.table("Store calls while firing (time each held the event loop)", n),
    ],
    notes: [
      `scheduled with scheduleMany in ${scheduleMs.toFixed(0)} ms, ${LEAD_MS} ms before the window; Scheduler defaults (horizon 1000 ms, claim batch 500, concurrency 100)`,
      `${succeeded.toLocaleString("en-US")} of ${n.toLocaleString("en-US")} jobs recorded as succeeded in the store`,
      "baseline: one bare setTimeout per job for the same offsets, lateness by Date.now()",
    ],
  };
}

function zero(metric: string, value: number, baseline: string) {
  return { metric, value: String(value), goal: "0", baseline, ratio: "-", pass: value === 0 };
}

/** One setTimeout per job, due at the same offsets from a fresh window start. */
async function bareTimers(
  n: number,
  offset: (i: number) => number,
): Promise<{ p50: number; p99: number; max: number; early: number }> {
  const late: number[] = [];
  let early = 0;
  const start = Date.now() + LEAD_MS;
  await new Promise<void>((resolve) => {
    let left = n;
    for (let i = 0; i < n; i++) {
      const due = start + offset(i);
      setTimeout(() => {
        const now = Date.now();
        if (now < due) early++;
        late.push(now - due);
        if (--left === 0) resolve();
      }, due - Date.now());
    }
  });
  const s = ascending(late);
  return { p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1]!, early };
}
