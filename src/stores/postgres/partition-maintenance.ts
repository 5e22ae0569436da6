import { bucketOf } from "../../core/buckets.js";
import { InvalidOptionError } from "../../core/errors.js";
import type { PostgresStore } from "./postgres-store.js";

/** Options of the partition maintenance loop. */
export interface PartitionMaintenanceOptions {
  /**
   * Live partitions kept created ahead of the current bucket, in buckets. Default: 14 days'
   * worth, at least 2 and at most 400. Writes further ahead (up to the store's on-demand
   * window) create their partition themselves; beyond it they land in the default partition.
   */
  readonly aheadBuckets?: number;
  /** History partitions kept created ahead of the current period. Default 2. */
  readonly historyAheadPeriods?: number;
  /**
   * Buckets an empty past partition is kept before it is dropped. Default 1: the partition
   * of the bucket that just ended stays one bucket longer (late retries and releases land
   * there cheaply).
   */
  readonly dropAfterBuckets?: number;
  /** Pause between passes in ms (plus up to 10% jitter). Default 60,000. */
  readonly intervalMs?: number;
  /** The clock, epoch ms. Default Date.now. */
  readonly now?: () => number;
  /** Errors of a pass (the loop carries on and retries after a backoff). */
  readonly onError?: (error: Error) => void;
}

/** What one pass did. */
export interface MaintenanceResult {
  /** Live and history partitions created. */
  readonly created: number;
  /** Names of live partitions dropped (empty, wholly in the past). */
  readonly dropped: readonly string[];
}

const DAY = 86_400_000;

/**
 * Keeps `jobs_live` partitioned ahead of time and sheds the past: each pass creates the
 * partitions of the next `aheadBuckets` buckets (moving rows the default partition holds
 * for those ranges) and the next history periods, then drops live partitions whose range
 * has passed and which hold no job, and vacuums `jobs_claimed`. History retention
 * (dropping old history partitions) is `historyPurge`, driven by the engine's retention
 * loop.
 */
export class PartitionMaintenance {
  private readonly o: Required<Omit<PartitionMaintenanceOptions, "onError">> & {
    onError: (e: Error) => void;
  };
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private started = false;
  private failures = 0;

  constructor(
    private readonly store: PostgresStore,
    options: PartitionMaintenanceOptions = {},
  ) {
    const w = store.bucketWidthMs;
    const o = {
      aheadBuckets: options.aheadBuckets ?? Math.min(400, Math.max(2, Math.ceil((14 * DAY) / w))),
      historyAheadPeriods: options.historyAheadPeriods ?? 2,
      dropAfterBuckets: options.dropAfterBuckets ?? 1,
      intervalMs: options.intervalMs ?? 60_000,
      now: options.now ?? Date.now,
      onError: options.onError ?? (() => {}),
    };
    for (const [name, v] of [
      ["aheadBuckets", o.aheadBuckets],
      ["historyAheadPeriods", o.historyAheadPeriods],
      ["dropAfterBuckets", o.dropAfterBuckets],
    ] as const) {
      if (!Number.isInteger(v) || v < 0 || v > 10_000) {
        throw new InvalidOptionError(name, "an integer from 0 to 10000", v);
      }
    }
    if (!Number.isInteger(o.intervalMs) || o.intervalMs < 10) {
      throw new InvalidOptionError("intervalMs", "an integer of at least 10", o.intervalMs);
    }
    this.o = Object.freeze(o);
  }

  /** One pass at `now` (default: the clock). */
  async runOnce(now: number = this.o.now()): Promise<MaintenanceResult> {
    const w = this.store.bucketWidthMs;
    const hw = this.store.historyWidthMs;
    const current = bucketOf(now, w);
    const live: number[] = [];
    for (let i = 0; i <= this.o.aheadBuckets; i++) live.push(current + i * w);
    const history: number[] = [];
    const period = bucketOf(now, hw);
    for (let i = 0; i <= this.o.historyAheadPeriods; i++) history.push(period + i * hw);
    // The catalog may have changed under us (another node dropped or created partitions).
    this.store.partitions.forget();
    let created = await this.store.partitions.ensure("jobs_live", live);
    created += await this.store.partitions.ensure("jobs_history", history);
    const dropped = await this.store.partitions.dropEmptyLive(
      current - this.o.dropAfterBuckets * w,
    );
    // jobs_claimed sees an insert and a delete per fired job: vacuum it every pass so its
    // size stays bounded by (fire rate x interval) instead of waiting for autovacuum's
    // thresholds. SKIP_LOCKED: when another node is vacuuming it, that is enough.
    await this.store.connection.query(`VACUUM (SKIP_LOCKED) "${this.store.schema}".jobs_claimed`);
    return { created, dropped };
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.runOnce()
        .then(() => {
          this.failures = 0;
          this.schedule(this.o.intervalMs * (1 + Math.random() * 0.1));
        })
        .catch((err: unknown) => {
          this.failures++;
          this.o.onError(new Error("partition maintenance pass failed", { cause: err }));
          const backoff = Math.min(this.o.intervalMs, 1000 * 2 ** Math.min(this.failures, 10));
          this.schedule(backoff * (0.5 + Math.random() * 0.5));
        })
        .finally(() => {
          this.running = null;
        });
    }, delayMs);
    this.timer.unref();
  }
}
