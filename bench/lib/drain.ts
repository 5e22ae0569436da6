import { Scheduler } from "../../src/api/scheduler.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { FiredLog } from "../../src/cli/fired-log.js";
import { Progress } from "./progress.js";
import { StoreCalls } from "./store-calls.js";

/** What firing a prepared set of due jobs with a started Scheduler measured. */
export interface DrainRun {
  readonly log: FiredLog;
  /** Jobs per second from start() until every job was fired and settled. */
  readonly rate: number;
  /** Jobs per second between the 10% and 90% marks (steady state). */
  readonly sustained: number;
  readonly seconds: number;
  readonly succeeded: number;
  /** Store calls the engine made while draining. */
  readonly calls: StoreCalls;
}

/**
 * Starts a Scheduler (default options, real clock, no-op handler) on a store file whose
 * `expected` jobs are already due, and measures until all are fired and settled.
 */
export async function drainWithScheduler(
  path: string,
  expected: number,
  label: string,
): Promise<DrainRun> {
  // Every job these runs fire carries a distinct payload number from 0 to `expected`.
  const log = new FiredLog(Math.max(1, Math.floor(expected / 10)), {
    of: (job) => {
      const n = (job.payload as { n?: unknown } | null)?.n;
      return typeof n === "number" && Number.isInteger(n) ? n : null;
    },
    capacity: expected + 1,
  });
  const store = new SqliteStore({ path });
  const calls = new StoreCalls(store);
  const scheduler = new Scheduler({ store });
  scheduler.handle("noop", log.handler);
  try {
    const p = new Progress(label, expected);
    const ticker = setInterval(() => p.update(log.distinct), 500);
    const t = performance.now();
    calls.start();
    scheduler.start();
    const all = await log.waitFor(expected, 600_000);
    await scheduler.idle();
    const seconds = (performance.now() - t) / 1000;
    calls.stop();
    clearInterval(ticker);
    const rate = log.distinct / seconds;
    p.done(`${Math.round(rate).toLocaleString("en-US")}/s`);
    if (!all) throw new Error(`${label}: only ${log.distinct} of ${expected} fired in 10 min`);
    const m = log.marks;
    const sustained = m.length >= 9 ? (0.8 * expected) / ((m[8]! - m[0]!) / 1000) : rate;
    const succeeded = (await store.jobsCountByStatus({})).succeeded;
    return { log, rate, sustained, seconds, succeeded, calls };
  } finally {
    await scheduler.close();
  }
}
