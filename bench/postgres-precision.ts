import { Scheduler } from "../src/api/scheduler.js";
import type { ScheduleInput } from "../src/core/schedule-input.js";
import { FiredLog } from "../src/cli/fired-log.js";
import { fmt, type BenchResult } from "./lib/report.js";
import { ascending, percentile } from "./lib/stats.js";
import { DAY, benchStore, dropStore, loadBacklog, type PgSizes } from "./postgres-common.js";

const LEAD_MS = 3000;
const GRACE_MS = 10_000;

/**
 * Precision with the timing wheel on PostgreSQL: `precisionJobs` jobs due evenly across
 * `precisionWindowMs`, on top of a pending future backlog, fired by a started Scheduler
 * (real clock, horizon 1 s, maxIdleMs 30 s) into a handler that records lateness
 * (wall time of the call - dueAt). Early, lost and duplicated are counted per id.
 */
export async function pgPrecision(sizes: PgSizes): Promise<BenchResult> {
  const n = sizes.precisionJobs;
  const windowMs = sizes.precisionWindowMs;
  const store = await benchStore("precision");
  const log = new FiredLog();
  try {
    await loadBacklog(store, sizes.precisionBacklog, Date.now() + 60_000, 30 * DAY);
    await store.connection.query(`VACUUM (ANALYZE) "${store.schema}".jobs_live`);
    const scheduler = new Scheduler({ store, maxIdleMs: 30_000 });
    scheduler.handle("noop", log.handler);
    scheduler.start();
    const start = Date.now() + LEAD_MS;
    const inputs: ScheduleInput[] = Array.from({ length: n }, (_, i) => ({
      dueAt: start + Math.floor((i * windowMs) / n),
      target: "noop",
    }));
    for (let i = 0; i < n; i += 5000) await scheduler.scheduleMany(inputs.slice(i, i + 5000));
    const late = Date.now() >= start;
    await log.waitFor(n, start + windowMs + GRACE_MS - Date.now());
    await new Promise((r) => setTimeout(r, 500)); // let a duplicate show up
    await scheduler.stop();
    const sorted = ascending(log.lateness);
    const p99 = percentile(sorted, 99);
    return {
      name: "postgres-precision",
      title: `PostgreSQL precision: ${n.toLocaleString("en-US")} jobs due across ${windowMs / 1000} s on a ${sizes.precisionBacklog.toLocaleString("en-US")} backlog, timing wheel`,
      goals: [
        {
          metric: "p99 lateness",
          value: `${fmt(p99)} ms`,
          goal: "<= 25 ms",
          baseline: "-",
          ratio: "-",
          pass: p99 <= 25,
        },
        {
          metric: "early / lost / duplicated",
          value: `${log.early} / ${n - log.distinct} / ${log.duplicates}`,
          goal: "0 / 0 / 0",
          baseline: "-",
          ratio: "-",
          pass: log.early === 0 && log.distinct === n && log.duplicates === 0,
        },
      ],
      details: [
        {
          title: "#### Lateness (ms)",
          headers: ["p50", "p90", "p99", "p99.9", "max"],
          rows: [[50, 90, 99, 99.9, 100].map((p) => fmt(percentile(sorted, p)))],
        },
      ],
      notes: late ? ["scheduling took longer than the lead: the first jobs were already due"] : [],
    };
  } finally {
    await dropStore(store);
  }
}
