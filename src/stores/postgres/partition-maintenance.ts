import { bucketOf } from "../../core/buckets.js";
import { systemClock, type Clock } from "../../core/clock.js";
import { InvalidOptionError } from "../../core/errors.js";
import { quietLogger, type Logger } from "../../core/logger.js";
import type { LoopGroup } from "../../core/loop.js";
import { PeriodicTask } from "../../core/periodic-task.js";
import type { PostgresContext } from "./context.js";

/** Pause between passes when none is given, ms (see PartitionMaintenanceOptions.intervalMs). */
export const DEFAULT_MAINTENANCE_INTERVAL_MS = 60_000;

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
  /** Pause between passes in ms (each waits 0.9 to 1.1 of it). Default 60,000. */
  readonly intervalMs?: number;
  /** The clock: which buckets are current, and the passes' timers. Default: the system clock. */
  readonly clock?: Clock;
  /** Where failed passes are logged (retried after a backoff). Default: nowhere. */
  readonly logger?: Logger;
  /** The node's loops that recover together (see LoopGroup). Default: none. */
  readonly loops?: LoopGroup;
}

/** What one pass did. */
export interface MaintenanceResult {
  /** Live and history partitions created. */
  readonly created: number;
  /** Names of live partitions dropped (empty, wholly in the past). */
  readonly dropped: readonly string[];
}

const DAY = 86_400_000;

type MaintenanceContext = Pick<
  PostgresContext,
  "pool" | "sql" | "partitions" | "bucketWidthMs" | "historyWidthMs"
>;

/**
 * Keeps `jobs_live` partitioned ahead of time and sheds the past: each pass creates the
 * partitions of the next `aheadBuckets` buckets (moving rows the default partition holds
 * for those ranges) and the next history periods, then drops live partitions whose range
 * has passed and which hold no job (once per bucket: a pass within the bucket of the last
 * one skips this), and vacuums `jobs_claimed` when it has dead rows. History retention
 * (dropping old history partitions) is `historyPurge`, driven by the engine's retention
 * loop. A PeriodicTask: the first pass at start(), then one every intervalMs.
 */
export class PartitionMaintenance extends PeriodicTask<MaintenanceResult> {
  private readonly o: Required<Omit<PartitionMaintenanceOptions, "logger" | "loops">>;
  /** Bucket and history period of the last pass that kept the partitions, if any. */
  private keptFor: { bucket: number; period: number } | null = null;
  /** Whether the last drop left a past partition (it held work): look again next pass. */
  private pastLeft = false;

  constructor(
    private readonly ctx: MaintenanceContext,
    options: PartitionMaintenanceOptions = {},
  ) {
    const o = resolveMaintenanceOptions(ctx.bucketWidthMs, options);
    super({
      name: "partition-maintenance",
      clock: o.clock,
      logger: options.logger ?? quietLogger,
      intervalMs: o.intervalMs,
      jitter: 0.1,
      // 1-2 s after a first failure (a DDL lock given up), growing up to the interval.
      errorBackoffMs: { min: 2000, max: o.intervalMs },
      group: options.loops,
    });
    this.o = o;
  }

  /** One pass at `now` (default: the clock). */
  override async runOnce(now: number = this.o.clock.now()): Promise<MaintenanceResult> {
    const { partitions } = this.ctx;
    const w = this.ctx.bucketWidthMs;
    const hw = this.ctx.historyWidthMs;
    const current = bucketOf(now, w);
    const live: number[] = [];
    for (let i = 0; i <= this.o.aheadBuckets; i++) live.push(current + i * w);
    const history: number[] = [];
    const period = bucketOf(now, hw);
    for (let i = 0; i <= this.o.historyAheadPeriods; i++) history.push(period + i * hw);
    try {
      let created = 0;
      let dropped: string[] = [];
      // Within one bucket and history period there is nothing new to create, and no
      // partition newly past: the catalog is read (3 statements) once per bucket, not per
      // pass, which keeps an idle node's cost down. Past partitions still holding work are
      // looked at every pass until they are dropped.
      const kept = this.keptFor;
      const moved = kept === null || kept.bucket !== current || kept.period !== period;
      if (moved) {
        // The catalog may have changed under us (another node dropped or created partitions).
        partitions.forget();
        created = await partitions.ensure("jobs_live", live);
        created += await partitions.ensure("jobs_history", history);
      }
      const cutoff = current - this.o.dropAfterBuckets * w;
      if (moved || this.pastLeft) {
        dropped = await partitions.dropEmptyLive(cutoff);
        this.pastLeft = partitions.hasKnownBefore("jobs_live", cutoff);
      }
      this.keptFor = { bucket: current, period };
      const need = await this.ctx.pool.query<{ needed: boolean }>(this.ctx.sql.claimedVacuumNeeded);
      if (need.rows[0]?.needed !== false) await this.ctx.pool.query(this.ctx.sql.claimedVacuum);
      return { created, dropped };
    } catch (err) {
      throw new Error("partition maintenance pass", { cause: err });
    }
  }
}

function resolveMaintenanceOptions(
  widthMs: number,
  options: PartitionMaintenanceOptions,
): Required<Omit<PartitionMaintenanceOptions, "logger" | "loops">> {
  const o = {
    aheadBuckets:
      options.aheadBuckets ?? Math.min(400, Math.max(2, Math.ceil((14 * DAY) / widthMs))),
    historyAheadPeriods: options.historyAheadPeriods ?? 2,
    dropAfterBuckets: options.dropAfterBuckets ?? 1,
    intervalMs: options.intervalMs ?? DEFAULT_MAINTENANCE_INTERVAL_MS,
    clock: options.clock ?? systemClock(),
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
  return Object.freeze(o);
}
