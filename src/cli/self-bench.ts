/**
 * The measuring behind `duetime bench`. It lives in src/ (the repository's bench/ suite is
 * not shipped) so that an installed duetime can measure itself on the user's machine.
 */
import type { Job, Scheduler, ScheduleInput } from "../index.js";
import { FiredLog } from "./fired-log.js";
import { percentile } from "./format.js";

const TARGET = "bench.noop";
const DAY = 86_400_000;
/** scheduleMany chunk: one transaction each. */
const CHUNK = 10_000;
/** How long after the last due time the precision phase waits before calling the rest lost. */
const GRACE_MS = 5000;
/** How long after the last precision job it waits for a duplicate firing to show. */
const DUPLICATE_WATCH_MS = 500;

/** What one `duetime bench` run measured; also its `--json` output. */
export interface SelfBenchResult {
  /** The scratch database the run used (deleted afterwards). */
  readonly db: string;
  /** Jobs already stored, far in the future, while the firing phases ran. */
  readonly backlog: number;
  readonly bulk: Rate;
  readonly oneAtATime: Rate;
  readonly dispatch: Rate & { readonly lost: number; readonly duplicated: number };
  readonly precision: {
    readonly jobs: number;
    readonly windowMs: number;
    readonly latenessMs: { readonly p50: number; readonly p99: number; readonly max: number };
    readonly early: number;
    readonly lost: number;
    readonly duplicated: number;
    /** The jobs took longer to store than their 1 s lead: lateness includes the wait. */
    readonly leadMissed: boolean;
  };
  /** Outcomes the store recorded: every fired job succeeded, the backlog is still pending. */
  readonly stored: { readonly succeeded: number; readonly pending: number };
  readonly wallMs: number;
}

/** `jobs` done in `ms` (only the measured calls): `perSecond`. */
export interface Rate {
  readonly jobs: number;
  readonly ms: number;
  readonly perSecond: number;
}

export interface SelfBenchOptions {
  readonly db: string;
  /** Jobs of the bulk phase; one at a time runs a tenth, dispatch half, precision a tenth (at most 20,000). */
  readonly jobs: number;
  /** Window the precision phase's jobs are due across, in ms. */
  readonly windowMs: number;
  /** Progress lines. */
  readonly say: (line: string) => void;
}

/** Whether a run found nothing wrong: no job lost, early or fired twice, every outcome stored. */
export function selfBenchPassed(r: SelfBenchResult): boolean {
  const p = r.precision;
  return (
    p.early === 0 &&
    p.lost === 0 &&
    p.duplicated === 0 &&
    r.dispatch.lost === 0 &&
    r.dispatch.duplicated === 0 &&
    r.stored.succeeded === r.dispatch.jobs + p.jobs &&
    r.stored.pending === r.backlog
  );
}

/**
 * Measures a Scheduler on an empty store, in four phases that build on each other:
 *  1. bulk: `jobs` jobs through scheduleMany (10k a transaction), due 1 to 30 days ahead;
 *  2. one at a time: a tenth as many through schedule, also far ahead;
 *  3. dispatch: half as many already due, fired by the started scheduler to a no-op
 *     handler, timed until every success is recorded;
 *  4. precision: a tenth (at most 20,000) due evenly across `windowMs`, from 1 s ahead;
 *     lateness is taken in the handler, unclamped, so an early firing shows as negative.
 * The far-future jobs stay pending throughout, so the firing phases run beside a backlog.
 * Jobs are built outside the timed calls, a chunk at a time.
 */
export async function runSelfBench(s: Scheduler, o: SelfBenchOptions): Promise<SelfBenchResult> {
  const started = Date.now();
  const oneCount = Math.floor(o.jobs / 10);
  const dispatchCount = Math.floor(o.jobs / 2);
  const precisionCount = Math.min(20_000, Math.floor(o.jobs / 10));
  const dispatched = numberedLog("dispatch", dispatchCount);
  const precise = numberedLog("precision", precisionCount);
  s.handle(TARGET, (job: Job) => {
    const phase = (job.payload as { phase?: unknown } | null)?.phase;
    if (phase === "dispatch") dispatched.handler(job);
    else if (phase === "precision") precise.handler(job);
  });

  const far = Date.now() + DAY;
  const future = (n: number): ScheduleInput => ({
    dueAt: far + Math.floor(Math.random() * 29 * DAY),
    target: TARGET,
    payload: { phase: "backlog", n },
  });
  const bulk = rate(o.jobs, await inChunks(o.jobs, future, (c) => s.scheduleMany(c)));
  o.say(`bulk: ${describe(bulk)} through scheduleMany (${CHUNK} per transaction)`);
  const oneAtATime = rate(
    oneCount,
    await inChunks(oneCount, future, async (c) => {
      for (const input of c) await s.schedule(input);
    }),
  );
  o.say(`one at a time: ${describe(oneAtATime)} through schedule (a transaction each)`);

  const now = Date.now();
  await inChunks(
    dispatchCount,
    (n) => ({
      dueAt: now - 60_000 + Math.floor((n * 60_000) / dispatchCount),
      target: TARGET,
      payload: { phase: "dispatch", n },
    }),
    (c) => s.scheduleMany(c),
  );
  const t0 = performance.now();
  s.start();
  // Generous: a job that never fires must end the run, not hang it.
  await dispatched.waitFor(dispatchCount, Math.max(60_000, dispatchCount));
  await s.idle();
  const dispatchRate = rate(dispatchCount, performance.now() - t0);
  const dispatch = {
    ...dispatchRate,
    lost: dispatchCount - dispatched.distinct,
    duplicated: dispatched.duplicates,
  };
  o.say(`dispatch: ${describe(dispatch)} already due, fired to a no-op handler and settled`);

  const firstDue = Date.now() + 1000;
  const lastDue = firstDue + o.windowMs;
  await inChunks(
    precisionCount,
    (n) => ({
      dueAt: firstDue + Math.floor((n * o.windowMs) / Math.max(1, precisionCount - 1)),
      target: TARGET,
      payload: { phase: "precision", n },
    }),
    (c) => s.scheduleMany(c),
  );
  const leadMissed = Date.now() >= firstDue;
  if (leadMissed) o.say("precision: storing the jobs took longer than their 1 s lead");
  o.say(`precision: ${precisionCount} jobs due across ${o.windowMs} ms, firing...`);
  await precise.waitFor(precisionCount, lastDue - Date.now() + GRACE_MS);
  await new Promise((r) => setTimeout(r, DUPLICATE_WATCH_MS));
  await s.stop();
  const lateness = [...precise.lateness].sort((a, b) => a - b);
  const counts = (await s.stats()).counts;
  return {
    db: o.db,
    backlog: o.jobs + oneCount,
    bulk,
    oneAtATime,
    dispatch,
    precision: {
      jobs: precisionCount,
      windowMs: o.windowMs,
      latenessMs: {
        p50: percentile(lateness, 50),
        p99: percentile(lateness, 99),
        max: lateness[lateness.length - 1] ?? 0,
      },
      early: precise.early,
      lost: precisionCount - precise.distinct,
      duplicated: precise.duplicates,
      leadMissed,
    },
    stored: { succeeded: counts.succeeded, pending: counts.pending },
    wallMs: Date.now() - started,
  };
}

/** A log of one phase's jobs, counted by their payload number `n` (0 to count - 1). */
function numberedLog(phase: string, count: number): FiredLog {
  return new FiredLog(0, {
    capacity: count,
    of: (job) => {
      const n = (job.payload as { n?: unknown } | null)?.n;
      return typeof n === "number" && Number.isInteger(n) ? n : null;
    },
  });
}

/**
 * Makes `count` jobs a chunk at a time and hands each chunk to `store`; returns the time
 * spent in `store` alone, in ms.
 */
async function inChunks(
  count: number,
  make: (n: number) => ScheduleInput,
  store: (chunk: ScheduleInput[]) => Promise<unknown>,
): Promise<number> {
  let ms = 0;
  for (let from = 0; from < count; from += CHUNK) {
    const chunk = Array.from({ length: Math.min(CHUNK, count - from) }, (_, i) => make(from + i));
    const t0 = performance.now();
    await store(chunk);
    ms += performance.now() - t0;
    // A store that answers at once settles its promises as microtasks: give the event loop
    // (signals, timers) a turn between chunks.
    await new Promise((r) => setImmediate(r));
  }
  return ms;
}

function rate(jobs: number, ms: number): Rate {
  return { jobs, ms: Math.round(ms * 10) / 10, perSecond: Math.round(jobs / (ms / 1000)) };
}

function describe(r: Rate): string {
  return `${r.jobs.toLocaleString("en-US")} jobs in ${(r.ms / 1000).toFixed(2)} s, ${r.perSecond.toLocaleString("en-US")}/s`;
}
