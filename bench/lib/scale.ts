/**
 * Benchmark sizes. `BENCH_SCALE=tiny` is the CI smoke run (the whole suite in well under a
 * minute, goals still printed but not meaningful); `medium` is a tenth of the backlogs, for
 * same-run comparisons of two trees in a few minutes each; `full` (the default) is the
 * issue's sizes.
 */
export type ScaleName = "tiny" | "medium" | "full";

export interface Sizes {
  readonly scale: ScaleName;
  /** Pending backlogs the poll-cost benchmark compares (smallest first). */
  readonly pollBacklogs: readonly number[];
  /** Jobs due at the poll instant (the same small due set at every backlog size). */
  readonly pollDue: number;
  /** The shared pending backlog the other benchmarks run on top of. */
  readonly backlog: number;
  /** Jobs scheduled through the bulk path (scheduleMany, 10k per transaction). */
  readonly scheduleBulk: number;
  /** Jobs scheduled one at a time (schedule). */
  readonly scheduleOne: number;
  /** Jobs of the precision run and the window they are due across, in ms. */
  readonly precisionJobs: number;
  readonly precisionWindowMs: number;
  /** Jobs already due when the dispatch-throughput run starts. */
  readonly dispatchJobs: number;
  /** Overdue jobs of the catch-up run, spread over `catchUpDays` of hour buckets. */
  readonly catchUpJobs: number;
  readonly catchUpDays: number;
  /** Backlogs the memory benchmark compares (smaller, larger). */
  readonly memoryBacklogs: readonly [number, number];
  /** How long idle CPU is measured, in ms. */
  readonly idleMeasureMs: number;
  /** Daily series the series benchmark stores, and the smaller store its poll cost is set against. */
  readonly series: number;
  readonly seriesPollSmall: number;
  /** Occurrences due in the series benchmark's window, and the window's length in ms. */
  readonly seriesWindow: number;
  readonly seriesWindowMs: number;
  /** Tagged backlogs the tag benchmark compares (smallest first), and the jobs of its one tag. */
  readonly tagBacklogs: readonly number[];
  readonly tagJobs: number;
  /** Jobs of the bulk cancel, and the jobs due across `bulkFiringWindowMs` that fire beside it. */
  readonly bulkCancelJobs: number;
  readonly bulkFiringJobs: number;
  readonly bulkFiringWindowMs: number;
  /** Jobs held by the paused tenant of the paused-idle benchmark (idle for `idleMeasureMs`). */
  readonly pausedJobs: number;
}

const FULL: Sizes = {
  scale: "full",
  pollBacklogs: [10_000, 1_000_000, 10_000_000],
  pollDue: 100,
  backlog: 10_000_000,
  scheduleBulk: 500_000,
  scheduleOne: 50_000,
  precisionJobs: 20_000,
  precisionWindowMs: 10_000,
  dispatchJobs: 200_000,
  catchUpJobs: 1_000_000,
  catchUpDays: 3,
  memoryBacklogs: [1_000_000, 10_000_000],
  idleMeasureMs: 30_000,
  series: 1_000_000,
  seriesPollSmall: 1_000,
  seriesWindow: 20_000,
  seriesWindowMs: 10_000,
  tagBacklogs: [10_000, 1_000_000, 10_000_000],
  tagJobs: 1000,
  bulkCancelJobs: 1_000_000,
  bulkFiringJobs: 3000,
  bulkFiringWindowMs: 30_000,
  pausedJobs: 1_000_000,
};

const MEDIUM: Sizes = {
  scale: "medium",
  pollBacklogs: [10_000, 1_000_000],
  pollDue: 100,
  backlog: 1_000_000,
  scheduleBulk: 100_000,
  scheduleOne: 10_000,
  precisionJobs: 5_000,
  precisionWindowMs: 5_000,
  dispatchJobs: 50_000,
  catchUpJobs: 100_000,
  catchUpDays: 3,
  memoryBacklogs: [100_000, 1_000_000],
  idleMeasureMs: 10_000,
  series: 100_000,
  seriesPollSmall: 1_000,
  seriesWindow: 5_000,
  seriesWindowMs: 5_000,
  tagBacklogs: [10_000, 1_000_000],
  tagJobs: 1000,
  bulkCancelJobs: 200_000,
  bulkFiringJobs: 1000,
  bulkFiringWindowMs: 10_000,
  pausedJobs: 100_000,
};

const TINY: Sizes = {
  scale: "tiny",
  pollBacklogs: [1_000, 10_000],
  pollDue: 100,
  backlog: 10_000,
  scheduleBulk: 20_000,
  scheduleOne: 2_000,
  precisionJobs: 2_000,
  precisionWindowMs: 2_000,
  dispatchJobs: 10_000,
  catchUpJobs: 10_000,
  catchUpDays: 3,
  memoryBacklogs: [1_000, 10_000],
  idleMeasureMs: 2_000,
  series: 2_000,
  seriesPollSmall: 200,
  seriesWindow: 500,
  seriesWindowMs: 2_000,
  tagBacklogs: [1_000, 10_000],
  tagJobs: 200,
  bulkCancelJobs: 10_000,
  bulkFiringJobs: 200,
  bulkFiringWindowMs: 2_000,
  pausedJobs: 10_000,
};

export function sizesFromEnv(env: NodeJS.ProcessEnv = process.env): Sizes {
  const scale = env.BENCH_SCALE ?? "full";
  if (scale === "tiny") return TINY;
  if (scale === "medium") return MEDIUM;
  if (scale === "full") return FULL;
  throw new Error(`BENCH_SCALE: expected "tiny", "medium" or "full", got ${JSON.stringify(scale)}`);
}

/** 10000000 -> "10M", 1000 -> "1k". */
export function count(n: number): string {
  if (n >= 1_000_000 && n % 1_000_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1000 && n % 1000 === 0) return `${n / 1000}k`;
  return String(n);
}
