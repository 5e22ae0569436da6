import type { Job, Scheduler, ScheduleInput } from "../index.js";
import { percentile } from "./format.js";

/** The handler every job of the run targets. */
export const BENCH_TARGET = "bench.noop";
const DAY = 86_400_000;
/** scheduleMany chunk: one transaction each. */
const BULK_CHUNK = 10_000;
/** How long after the last due time the precision phase waits before calling the rest lost. */
const GRACE_MS = 5000;

/** What one `duetime bench` run measured; also its `--json` output. */
export interface SelfBenchResult {
  /** Jobs already stored, far in the future, when the firing phases ran. */
  readonly backlog: number;
  readonly bulk: Rate;
  readonly oneAtATime: Rate;
  readonly dispatch: Rate;
  readonly precision: {
    readonly jobs: number;
    readonly windowMs: number;
    readonly latenessMs: { readonly p50: number; readonly p99: number; readonly max: number };
    readonly early: number;
    readonly lost: number;
    readonly duplicated: number;
  };
  readonly wallMs: number;
}

/** `jobs` done in `ms`: `perSecond`. */
export interface Rate {
  readonly jobs: number;
  readonly ms: number;
  readonly perSecond: number;
}

export interface SelfBenchOptions {
  /** Jobs of the bulk phase; one at a time runs a tenth, dispatch half, precision a tenth (at most 20,000). */
  readonly jobs: number;
  /** Window the precision phase's jobs are due across, in ms. */
  readonly windowMs: number;
  /** Progress lines. */
  readonly say: (line: string) => void;
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
 */
export async function runSelfBench(s: Scheduler, o: SelfBenchOptions): Promise<SelfBenchResult> {
  const started = Date.now();
  const counts = new FiringCounts();
  s.handle(BENCH_TARGET, (job: Job) => counts.handlerStarted(job));

  const bulk = await timed(o.jobs, async () => {
    for (let done = 0; done < o.jobs; done += BULK_CHUNK) {
      await s.scheduleMany(futureJobs(Math.min(BULK_CHUNK, o.jobs - done)));
    }
  });
  o.say(`bulk: ${describe(bulk)} through scheduleMany (${BULK_CHUNK} per transaction)`);

  const oneCount = Math.floor(o.jobs / 10);
  const oneAtATime = await timed(oneCount, async () => {
    for (const input of futureJobs(oneCount)) await s.schedule(input);
  });
  o.say(`one at a time: ${describe(oneAtATime)} through schedule (a transaction each)`);

  const dispatchCount = Math.floor(o.jobs / 2);
  const now = Date.now();
  await scheduleInChunks(
    s,
    Array.from({ length: dispatchCount }, (_, i) => ({
      dueAt: now - 60_000 + Math.floor((i * 60_000) / dispatchCount),
      target: BENCH_TARGET,
      payload: { phase: "dispatch" },
    })),
  );
  const dispatch = await timed(dispatchCount, async () => {
    const all = counts.waitForDispatched(dispatchCount);
    s.start();
    await all;
    await s.idle();
  });
  o.say(`dispatch: ${describe(dispatch)} already due, fired to a no-op handler and settled`);

  const precisionCount = Math.min(20_000, Math.floor(o.jobs / 10));
  const firstDue = Date.now() + 1000;
  const lastDue = firstDue + o.windowMs;
  counts.expectPrecision(precisionCount);
  await scheduleInChunks(
    s,
    Array.from({ length: precisionCount }, (_, n) => ({
      dueAt: firstDue + Math.floor((n * o.windowMs) / Math.max(1, precisionCount - 1)),
      target: BENCH_TARGET,
      payload: { phase: "precision", n },
    })),
  );
  o.say(`precision: ${precisionCount} jobs due across ${o.windowMs} ms, firing...`);
  await counts.precisionDone(lastDue - Date.now() + GRACE_MS);
  await s.stop();
  const lateness = counts.precisionLateness();
  const precision = {
    jobs: precisionCount,
    windowMs: o.windowMs,
    latenessMs: {
      p50: percentile(lateness, 50),
      p99: percentile(lateness, 99),
      max: lateness[lateness.length - 1] ?? 0,
    },
    early: lateness.filter((l) => l < 0).length,
    lost: precisionCount - lateness.length,
    duplicated: counts.duplicated,
  };
  return {
    backlog: o.jobs + oneCount,
    bulk,
    oneAtATime,
    dispatch,
    precision,
    wallMs: Date.now() - started,
  };
}

/** Jobs due at random between 1 and 30 days from now. */
function futureJobs(n: number): ScheduleInput[] {
  const from = Date.now() + DAY;
  return Array.from({ length: n }, (_, i) => ({
    dueAt: from + Math.floor(Math.random() * 29 * DAY),
    target: BENCH_TARGET,
    payload: { phase: "backlog", i },
  }));
}

async function scheduleInChunks(s: Scheduler, inputs: readonly ScheduleInput[]): Promise<void> {
  for (let i = 0; i < inputs.length; i += BULK_CHUNK) {
    await s.scheduleMany(inputs.slice(i, i + BULK_CHUNK));
  }
}

async function timed(jobs: number, fn: () => Promise<void>): Promise<Rate> {
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  return { jobs, ms: Math.round(ms * 10) / 10, perSecond: Math.round(jobs / (ms / 1000)) };
}

function describe(r: Rate): string {
  return `${r.jobs.toLocaleString("en-US")} jobs in ${(r.ms / 1000).toFixed(2)} s, ${r.perSecond.toLocaleString("en-US")}/s`;
}

/** Counts handler calls per phase: dispatched jobs, and each precision job's lateness. */
class FiringCounts {
  private dispatched = 0;
  private dispatchTarget = Infinity;
  private onDispatched: () => void = () => undefined;
  private lateness = new Float64Array(0);
  private fired = new Uint8Array(0);
  private precisionFired = 0;
  private onPrecision: () => void = () => undefined;
  duplicated = 0;

  handlerStarted(job: Job): void {
    const late = Date.now() - job.dueAt;
    const p = job.payload as { phase?: string; n?: number } | null;
    if (p?.phase === "dispatch") {
      if (++this.dispatched === this.dispatchTarget) this.onDispatched();
    } else if (p?.phase === "precision" && typeof p.n === "number" && p.n < this.fired.length) {
      if (this.fired[p.n] === 1) {
        this.duplicated++;
        return;
      }
      this.fired[p.n] = 1;
      this.lateness[p.n] = late;
      if (++this.precisionFired === this.fired.length) this.onPrecision();
    }
  }

  waitForDispatched(n: number): Promise<void> {
    this.dispatchTarget = n;
    return n === 0 || this.dispatched >= n
      ? Promise.resolve()
      : new Promise((resolve) => (this.onDispatched = resolve));
  }

  expectPrecision(n: number): void {
    this.lateness = new Float64Array(n);
    this.fired = new Uint8Array(n);
    this.precisionFired = 0;
  }

  /** Resolves when every precision job has fired, or after `timeoutMs`. */
  async precisionDone(timeoutMs: number): Promise<void> {
    if (this.precisionFired === this.fired.length) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (this.onPrecision = resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, timeoutMs)))),
    ]);
    clearTimeout(timer);
  }

  /** Lateness of every precision job that fired, sorted. */
  precisionLateness(): number[] {
    const out: number[] = [];
    for (let n = 0; n < this.fired.length; n++)
      if (this.fired[n] === 1) out.push(this.lateness[n]!);
    return out.sort((a, b) => a - b);
  }
}
