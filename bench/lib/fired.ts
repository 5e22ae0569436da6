import type { Job } from "../../src/core/job.js";

/**
 * A no-op handler that records every call: calls per id (lost and duplicated jobs), the
 * wall time of each first call against the job's due time (lateness, early fires), and
 * the order of buckets fired (catch-up: oldest first).
 */
export class FiredLog {
  readonly calls = new Map<string, number>();
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

  constructor(private readonly markEvery = 0) {}

  readonly handler = (job: Job): void => {
    const now = Date.now();
    this.total++;
    const seen = this.calls.get(job.id) ?? 0;
    this.calls.set(job.id, seen + 1);
    if (seen > 0) return;
    if (now < job.dueAt) this.early++;
    this.lateness.push(now - job.dueAt);
    if (job.bucket < this.maxBucket) this.bucketRegressions++;
    else this.maxBucket = job.bucket;
    const t = performance.now();
    if (this.calls.size === 1) this.firstAt = t;
    this.lastAt = t;
    if (this.markEvery > 0 && this.calls.size % this.markEvery === 0) this.marks.push(t);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (this.calls.size >= w.n) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  };

  /** Distinct jobs fired. */
  get distinct(): number {
    return this.calls.size;
  }

  get duplicates(): number {
    return this.total - this.calls.size;
  }

  /** Resolves when `n` distinct jobs have fired, or after `timeoutMs` (false). */
  waitFor(n: number, timeoutMs: number): Promise<boolean> {
    if (this.calls.size >= n) return Promise.resolve(true);
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
