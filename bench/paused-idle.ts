import { Scheduler } from "../src/api/scheduler.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { backlogFile, scratchCopy } from "./lib/data.js";
import { idleChild, type ChildReport } from "./lib/idle-child-run.js";
import { note } from "./lib/progress.js";
import { fmt, rate, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";

/**
 * Issue 13 §4: what a paused tenant costs. Two scratch copies of the shared pending backlog
 * (`pausedJobs` jobs of the default tenant, due 2 to 32 days ahead); on one the tenant is
 * paused (Scheduler.pause({ scope: { tenant: true } }) and runPauseWork, as `duetime pause
 * --tenant` does on a local file: every job moved out of the due-time index into `held`).
 * Then the idle child of memory-idle opens each copy, starts a Scheduler with defaults and
 * sits idle for `idleMeasureMs`: the SQLite statements it runs and its CPU time, per
 * minute, beside the same scheduler on the copy with no pause (same run).
 */
export async function pausedIdle(sizes: Sizes): Promise<BenchResult> {
  const n = sizes.pausedJobs;
  const { path } = await backlogFile(n);
  const plain = scratchCopy(path, "paused-idle-plain");
  const paused = scratchCopy(path, "paused-idle-paused");
  try {
    const hold = await pauseTenant(paused.path, n);
    const window = String(sizes.idleMeasureMs);
    note(`paused-idle: idle for ${sizes.idleMeasureMs / 1000} s, no pause`);
    const base = await idleChild(["store", window, plain.path]);
    note(`paused-idle: idle for ${sizes.idleMeasureMs / 1000} s, tenant paused`);
    const held = await idleChild(["store", window, paused.path]);
    if (held.paused !== n || base.paused !== 0) {
      throw new Error(`paused-idle: ${held.paused} held (expected ${n}), ${base.paused} unpaused`);
    }
    return report(sizes, base, held, hold);
  } finally {
    plain.remove();
    paused.remove();
  }
}

/** Pauses the default tenant of the file and holds every job; resolves to the time taken. */
async function pauseTenant(path: string, n: number): Promise<{ ms: number; held: number }> {
  const scheduler = new Scheduler({ store: new SqliteStore({ path }) });
  try {
    note(`paused-idle: pausing the tenant's ${count(n)} jobs`);
    const t = performance.now();
    const pause = await scheduler.pause({ scope: { tenant: true } });
    await scheduler.runPauseWork();
    const ms = performance.now() - t;
    const after = await scheduler.getPause(pause.id);
    return { ms, held: after?.heldJobs ?? 0 };
  } finally {
    await scheduler.close();
  }
}

function report(
  sizes: Sizes,
  base: ChildReport,
  held: ChildReport,
  hold: { ms: number; held: number },
): BenchResult {
  const perMin = (r: ChildReport, v: number): number => v / (r.wallMs / 60_000);
  const st = (r: ChildReport): number => perMin(r, r.statements);
  const cpuMs = (r: ChildReport): number => (r.cpuPct / 100) * 60_000;
  const jobs = count(sizes.pausedJobs);
  return {
    name: "paused-idle",
    title: `Paused tenant: ${jobs} held jobs, a started Scheduler otherwise idle for ${sizes.idleMeasureMs / 1000} s`,
    goals: [
      {
        metric: `SQLite statements per minute, tenant paused with ${jobs} held`,
        value: fmt(st(held), 1),
        goal: "<= 1.1x of no pause",
        baseline: fmt(st(base), 1),
        ratio: ratio(st(held), st(base)),
        pass: st(held) <= 1.1 * st(base),
      },
      {
        metric: `CPU ms per minute, tenant paused with ${jobs} held`,
        value: `${fmt(cpuMs(held), 1)} ms`,
        goal: "< 600 ms (1 % of a core)",
        baseline: `${fmt(cpuMs(base), 1)} ms`,
        ratio: ratio(cpuMs(held), cpuMs(base)),
        pass: cpuMs(held) < 600,
      },
      {
        metric: `RSS max, tenant paused with ${jobs} held`,
        value: `${fmt(held.rssMax, 1)} MiB`,
        goal: "-",
        baseline: `${fmt(base.rssMax, 1)} MiB`,
        ratio: ratio(held.rssMax, base.rssMax),
        pass: null,
      },
      {
        metric: `holding the ${jobs} jobs (pause + runPauseWork), jobs/s`,
        value: rate(hold.held / (hold.ms / 1000)),
        goal: "-",
        baseline: "-",
        ratio: "-",
        pass: null,
      },
    ],
    details: [],
    notes: [
      `statements counted in the child at the driver (each prepared statement's run/get/all/iterate, each exec and pragma; a transaction's BEGIN/COMMIT not counted) over ${fmt(held.wallMs / 1000, 1)} s, scaled to a minute`,
      `baseline: the same child and Scheduler defaults on a copy of the same ${jobs} backlog with no pause (${base.pending.toLocaleString("en-US")} pending); held ${hold.held.toLocaleString("en-US")} in ${fmt(hold.ms / 1000, 2)} s`,
    ],
  };
}
