import type { Job } from "../src/core/job.js";
import { Scheduler } from "../src/api/scheduler.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { backlogFile, scratchCopy } from "./lib/data.js";
import { note } from "./lib/progress.js";
import { fmt, rate, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";
import { StoreCalls } from "./lib/store-calls.js";
import { ascending, percentile, sleep } from "./lib/stats.js";

/**
 * Issue 13 §3: a bulk cancel of `bulkCancelJobs` jobs (one tag, a cached file) on a started
 * Scheduler while other jobs fire. The same started Scheduler (defaults, real clock) fires
 * `bulkFiringJobs` jobs due evenly across `bulkFiringWindowMs` twice: first alone (the
 * baseline), then with the cancel started through startOperation at the window's start, its
 * batches run by the engine's operation runner between the firing. Reported: the
 * operation's rate (jobs cancelled over the time from its start until it is done, from its
 * record), and the lateness of the jobs due while it ran beside the same window alone.
 * "Never stalls firing" is read as: no job lost, and no job due while the operation runs
 * fired more than STALL_MS late.
 */
const LEAD_MS = 1500;
const GRACE_MS = 10_000;
const STALL_MS = 100;
const TAG = "campaign:000000000";

/** Lateness per job of a window, by the payload's number; calls counted per job. */
class WindowLog {
  readonly late: Float64Array;
  private readonly calls: Uint8Array;
  distinct = 0;
  duplicates = 0;
  early = 0;
  private waiter: (() => void) | null = null;

  constructor(readonly size: number) {
    this.late = new Float64Array(size).fill(NaN);
    this.calls = new Uint8Array(size);
  }

  readonly handler = (job: Job): void => {
    const now = Date.now();
    const i = (job.payload as { n: number }).n;
    if (this.calls[i]! > 0) {
      this.duplicates++;
      return;
    }
    this.calls[i] = 1;
    this.late[i] = now - job.dueAt;
    if (now < job.dueAt) this.early++;
    if (++this.distinct === this.size) this.waiter?.();
  };

  /** Resolves once every job fired, or after `ms`. */
  waitAll(ms: number): Promise<void> {
    if (this.distinct === this.size) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.waiter = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
}

interface Window {
  readonly log: WindowLog;
  /** Due times of the jobs, by payload number. */
  readonly dueAt: number[];
}

export async function bulkCancel(sizes: Sizes): Promise<BenchResult> {
  const n = sizes.bulkCancelJobs;
  const { path } = await backlogFile(n, { prefix: "campaign:", perTag: n });
  const copy = scratchCopy(path, "bulk-cancel");
  try {
    const store = new SqliteStore({ path: copy.path });
    const calls = new StoreCalls(store);
    const scheduler = new Scheduler({ store });
    let current = new WindowLog(sizes.bulkFiringJobs);
    scheduler.handle("noop", (job: Job) => current.handler(job));
    try {
      scheduler.start();
      await sleep(200);
      const fire = async (log: WindowLog, during?: () => Promise<void>): Promise<Window> => {
        current = log;
        return fireWindow(scheduler, sizes, log, during);
      };
      note(`bulk-cancel: ${sizes.bulkFiringJobs} jobs firing alone (baseline)`);
      const alone = await fire(new WindowLog(sizes.bulkFiringJobs));
      let started = 0;
      let doneAt = 0;
      let opId = "";
      note(`bulk-cancel: the same beside a cancel of ${count(n)} jobs`);
      calls.start();
      const beside = await fire(new WindowLog(sizes.bulkFiringJobs), async () => {
        started = Date.now();
        const { operation: op } = await scheduler.startOperation({
          kind: "cancel",
          filter: { tags: [TAG] },
        });
        opId = op.id;
        for (;;) {
          const now = await scheduler.getOperation(op.id);
          if (now && now.state !== "queued" && now.state !== "running") break;
          await sleep(50);
        }
        doneAt = Date.now();
      });
      calls.stop();
      const op = await scheduler.getOperation(opId);
      if (!op || op.state !== "done" || op.changed !== n) {
        throw new Error(
          `bulk-cancel: operation ${op?.state} with ${op?.changed} cancelled of ${n}`,
        );
      }
      const opMs = op.finishedAt! - op.createdAt;
      return report(sizes, { alone, beside, started, doneAt, opMs, calls });
    } finally {
      await scheduler.close();
    }
  } finally {
    copy.remove();
  }
}

/** Schedules the window's jobs, runs `during` at its start, waits for every job to fire. */
async function fireWindow(
  scheduler: Scheduler,
  sizes: Sizes,
  log: WindowLog,
  during?: () => Promise<void>,
): Promise<Window> {
  const jobs = sizes.bulkFiringJobs;
  const start = Date.now() + LEAD_MS;
  const dueAt = Array.from(
    { length: jobs },
    (_, i) => start + Math.floor((i * sizes.bulkFiringWindowMs) / jobs),
  );
  await scheduler.scheduleMany(
    dueAt.map((d, i) => ({ dueAt: d, target: "noop", payload: { n: i } })),
  );
  await sleep(start - Date.now());
  const side = during?.();
  await log.waitAll(start + sizes.bulkFiringWindowMs + GRACE_MS - Date.now());
  await side;
  await sleep(300); // a duplicate would show up now
  return { log, dueAt };
}

interface Runs {
  readonly alone: Window;
  readonly beside: Window;
  /** Wall clock when startOperation was called, and when the record was seen done. */
  readonly started: number;
  readonly doneAt: number;
  /** The record's own time from creation to its last batch. */
  readonly opMs: number;
  readonly calls: StoreCalls;
}

function report(sizes: Sizes, r: Runs): BenchResult {
  const n = sizes.bulkCancelJobs;
  // the jobs due while the operation ran, and the same positions of the window alone
  const whileRunning = (w: Window, from: number, to: number): number[] =>
    ascending(
      [...w.log.late].filter(
        (l, i) => !Number.isNaN(l) && w.dueAt[i]! >= from && w.dueAt[i]! <= to,
      ),
    );
  const offset = (w: Window): number => w.dueAt[0]!;
  const from = r.started - offset(r.beside);
  const to = r.doneAt - offset(r.beside);
  const during = whileRunning(r.beside, r.started, r.doneAt);
  const base = whileRunning(r.alone, offset(r.alone) + from, offset(r.alone) + to);
  const p = (xs: number[], q: number): number => percentile(xs, q);
  const lost = (w: Window): number => sizes.bulkFiringJobs - w.log.distinct;
  const opRate = n / (r.opMs / 1000);
  const max = during[during.length - 1] ?? NaN;
  return {
    name: "bulk-cancel",
    title: `Bulk cancel: ${count(n)} jobs of one tag on a started Scheduler while ${sizes.bulkFiringJobs.toLocaleString("en-US")} jobs fire across ${sizes.bulkFiringWindowMs / 1000} s`,
    goals: [
      {
        metric: `cancel of ${count(n)} jobs (startOperation, the engine's runner), jobs/s`,
        value: rate(opRate),
        goal: ">= 50,000/s",
        baseline: "-",
        ratio: "-",
        pass: opRate >= 50_000,
      },
      {
        metric: `lateness p99 of the ${during.length} jobs due while it ran`,
        value: `${fmt(p(during, 99), 1)} ms`,
        goal: "reported",
        baseline: `${fmt(p(base, 99), 1)} ms`,
        ratio: ratio(p(during, 99), p(base, 99)),
        pass: null,
      },
      {
        metric: "firing never stalls: lateness max while it ran, jobs lost",
        value: `${fmt(max, 1)} ms, ${lost(r.beside)} lost`,
        goal: `<= ${STALL_MS} ms, 0 lost`,
        baseline: `${fmt(base[base.length - 1] ?? NaN, 1)} ms, ${lost(r.alone)} lost`,
        ratio: ratio(max, base[base.length - 1] ?? NaN),
        pass: max <= STALL_MS && lost(r.beside) === 0 && during.length > 0,
      },
    ],
    details: [
      {
        title: "Lateness of the firing jobs, ms (whole window)",
        headers: ["run", "p50", "p99", "max", "early", "duplicated"],
        rows: [
          ["alone", r.alone],
          ["beside the cancel", r.beside],
        ].map(([label, w]) => {
          const win = w as Window;
          const all = ascending([...win.log.late].filter((l) => !Number.isNaN(l)));
          return [
            label as string,
            fmt(p(all, 50), 1),
            fmt(p(all, 99), 1),
            fmt(all[all.length - 1] ?? NaN, 1),
            win.log.early,
            win.log.duplicates,
          ];
        }),
      },
      r.calls.table("Store calls beside the cancel (time each held the event loop)", n),
    ],
    notes: [
      `the operation ran ${fmt(r.opMs / 1000, 2)} s by its record (${fmt((r.doneAt - r.started) / 1000, 2)} s from startOperation until getOperation saw it done, read every 50 ms)`,
      `Scheduler defaults: operation batch 2,000 jobs (one transaction each), horizon 1000 ms, claim batch 500; the ${count(n)} jobs are due 2 to 32 days ahead, cached file`,
      `baseline: the same started Scheduler firing the same window with no operation, just before; lateness p99 compared over the same positions of the window`,
    ],
  };
}
