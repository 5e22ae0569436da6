import type { Job } from "../core/job.js";

/**
 * A no-op handler that records every call: calls per id (lost and duplicated jobs), the
 * wall time of each first call against the job's due time (lateness, early fires), and
 * the order of buckets fired (catch-up: oldest first).
 */
export class FiredLog {
  /** Calls per job id (jobs without an index number). */
  private readonly calls = new Map<string, number>();
  /** Calls per job index number, when the run gives each job one (see constructor). */
  private readonly counts: Uint8Array | null;
  private distinctCount = 0;
  readonly lateness: number[] = [];
  early = 0;
  total = 0;
  /** Jobs fired from an earlier bucket than one already fired. */
  bucketRegressions = 0;
  private maxBucket = -Infinity;
  private readonly waiters: { n: number; resolve: () => void }[] = [];
  firstAt = 0;
  lastAt = 0;
  /** performance.now() when the n-th distinct job fired, sampled every `markEvery`. */
  readonly marks: number[] = [];

  /**
   * @param index With 1M-job runs a Map of every id costs the no-op handler more than the
   *   engine's own work per job; a run whose jobs each carry a distinct number (payload
   *   `{ n }`, from 0 to `capacity - 1`) counts calls in a typed array instead. A job
   *   without one falls back to the map.
   */
  constructor(
    private readonly markEvery = 0,
    private readonly index?: {
      readonly of: (job: Job) => number | null;
      readonly capacity: number;
    },
  ) {
    this.counts = index ? new Uint8Array(index.capacity) : null;
  }

  /** How many times this job was called before this call (and records this one). */
  private seenBefore(job: Job): number {
    const n = this.index?.of(job) ?? null;
    if (this.counts && n !== null && n >= 0 && n < this.counts.length) {
      const seen = this.counts[n]!;
      this.counts[n] = Math.min(255, seen + 1);
      return seen;
    }
    const seen = this.calls.get(job.id) ?? 0;
    this.calls.set(job.id, seen + 1);
    return seen;
  }

  readonly handler = (job: Job): void => {
    const now = Date.now();
    this.total++;
    if (this.seenBefore(job) > 0) return;
    this.distinctCount++;
    if (now < job.dueAt) this.early++;
    this.lateness.push(now - job.dueAt);
    if (job.bucket < this.maxBucket) this.bucketRegressions++;
    else this.maxBucket = job.bucket;
    const t = performance.now();
    if (this.distinctCount === 1) this.firstAt = t;
    this.lastAt = t;
    if (this.markEvery > 0 && this.distinctCount % this.markEvery === 0) this.marks.push(t);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (this.distinctCount >= w.n) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  };

  /** Distinct jobs fired. */
  get distinct(): number {
    return this.distinctCount;
  }

  get duplicates(): number {
    return this.total - this.distinctCount;
  }

  /** Resolves when `n` distinct jobs have fired, or after `timeoutMs` (false). */
  waitFor(n: number, timeoutMs: number): Promise<boolean> {
    if (this.distinctCount >= n) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      });
    });
  }
}
