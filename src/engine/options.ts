import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Clock } from "../core/clock.js";
import { systemClock } from "../core/clock.js";
import { InvalidOptionError } from "../core/errors.js";
import type { Store } from "../store/store.js";
import { defaultLogger, type Logger } from "./logger.js";

/** Options of a Scheduler. Every duration is in milliseconds. */
export interface SchedulerOptions {
  /** The store jobs live in. Required. */
  readonly store: Store;
  /** Time source and timers. Default: the system clock. Tests pass a ManualClock. */
  readonly clock?: Clock;
  /** pino-compatible logger. Default: pino to stderr at level warn (DUETIME_LOG_LEVEL). */
  readonly logger?: Logger;
  /** Lease owner name of this process. Default: hostname-pid-random. */
  readonly nodeId?: string;
  /** Tenant of jobs scheduled without one. Default "default". */
  readonly defaultTenant?: string;
  /** Handlers running at once. Default 100. */
  readonly concurrency?: number;
  /**
   * Handlers one tenant may run at once. Tenants with due work take turns at the free slots;
   * this cap keeps slots free for the others while one tenant's slow targets hold theirs, so
   * a tenant arriving later starts at once instead of waiting for a slot to free. Default:
   * concurrency minus a tenth of it (90 of 100; all of them below 10).
   */
  readonly tenantConcurrency?: number;
  /** Jobs claimed per claim statement. Default 500. */
  readonly claimBatchSize?: number;
  /**
   * How far ahead of their due time jobs are claimed into the in-memory timing wheel, which
   * then fires each at its millisecond. Default 1000.
   */
  readonly horizonMs?: number;
  /** How long before a bucket starts its jobs are staged into the hot index. Default 60000. */
  readonly stageAheadMs?: number;
  /** Rows staged per watcher pass (bounds each pass during catch-up). Default 5000. */
  readonly stageBatchSize?: number;
  /**
   * Longest sleep of the watcher: the precision contract for jobs written by another process
   * (writes in this process wake it at once). Default 1000; 30000 for a store that announces
   * other processes' writes (PostgreSQL LISTEN/NOTIFY).
   */
  readonly maxIdleMs?: number;
  /** Lease of a claim: a job not acknowledged by then comes back. Default 60000. */
  readonly leaseMs?: number;
  /** A handler running longer than this fails its attempt (its AbortSignal fires). Default 30000. */
  readonly handlerTimeoutMs?: number;
  /** Default max attempts of a job. Default 3. */
  readonly maxAttempts?: number;
  /** First retry delay; doubles each attempt, with jitter. Default 1000. */
  readonly backoffBaseMs?: number;
  /** Cap on the retry delay. Default 3600000 (one hour). */
  readonly backoffMaxMs?: number;
  /** How often expired leases are swept. Default 5000. */
  readonly leaseSweepIntervalMs?: number;
  /** How long finished jobs are kept. Default 604800000 (7 days). */
  readonly retentionMs?: number;
  /** How often retention runs. Default 60000. */
  readonly retentionIntervalMs?: number;
  /** Largest payload, in bytes of JSON. Default 65536. */
  readonly maxPayloadBytes?: number;
  /** How far in the past a due time may be when scheduling, or null for any. Default null. */
  readonly maxPastMs?: number | null;
  /**
   * Most claimed-but-unsettled jobs held in memory (wheel, queue, running and settling); the
   * watcher claims only while a full claim batch fits under it. Default 10000.
   */
  readonly maxHeld?: number;
  /**
   * Smallest step of the wall clock against the monotonic clock reported as a clock jump
   * (logged, counted in stats and metrics; see docs/clocks.md). Default 1000.
   */
  readonly clockJumpThresholdMs?: number;
  /** How often the wall clock is compared with the monotonic clock while running. Default 1000. */
  readonly clockCheckIntervalMs?: number;
  /**
   * For a store with a clock of its own (PostgreSQL): difference between this node's clock
   * and the database's above which a warning is logged, checked at start and every
   * `clockSkewCheckIntervalMs`. Default 1000.
   */
  readonly clockSkewWarnMs?: number;
  /** How often this node's clock is compared with the store's. Default 60000. */
  readonly clockSkewCheckIntervalMs?: number;
  /**
   * Admission of new jobs: called by `schedule` and `scheduleMany` after validation and
   * before anything is written, once per tenant with the number of jobs it asks for; a
   * throw (QuotaExceededError) refuses the whole call. The service's per-tenant quotas
   * plug in here, so every way of creating jobs is held to them. Default: none.
   */
  readonly admit?: (request: { readonly tenant: string; readonly jobs: number }) => Promise<void>;
  /**
   * Shards this node may claim; undefined means all. Called before every claim. By default a
   * store with node services (PostgreSQL) supplies it from its shard leases; pass it only to
   * run those services yourself.
   */
  readonly shards?: () => readonly number[] | undefined;
}

export type ResolvedOptions = Readonly<
  Required<Omit<SchedulerOptions, "shards" | "maxPastMs" | "admit">> & {
    shards: (() => readonly number[] | undefined) | undefined;
    admit: SchedulerOptions["admit"];
    maxPastMs: number | null;
  }
>;

/** Defaults applied into a new frozen object; the caller's object is never mutated. */
export function resolveOptions(o: SchedulerOptions): ResolvedOptions {
  if (!o || typeof o.store !== "object" || o.store === null) {
    throw new InvalidOptionError("store", "a Store (see openStore)", o?.store);
  }
  const concurrency = int(o.concurrency, "concurrency", 100, 1, 100_000);
  const r = {
    store: o.store,
    clock: o.clock ?? systemClock(),
    logger: o.logger ?? defaultLogger(),
    nodeId: o.nodeId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`,
    defaultTenant: o.defaultTenant ?? "default",
    concurrency,
    tenantConcurrency: int(
      o.tenantConcurrency,
      "tenantConcurrency",
      concurrency - Math.floor(concurrency / 10),
      1,
      concurrency,
    ),
    claimBatchSize: int(o.claimBatchSize, "claimBatchSize", 500, 1, 100_000),
    horizonMs: int(o.horizonMs, "horizonMs", 1000, 0, 3_600_000),
    stageAheadMs: int(o.stageAheadMs, "stageAheadMs", 60_000, 0, 86_400_000),
    stageBatchSize: int(o.stageBatchSize, "stageBatchSize", 5000, 1, 1_000_000),
    // A store that announces earlier writes (PostgreSQL NOTIFY) needs the idle poll only as a
    // safety net: 30 s keeps an idle node to a handful of statements a minute.
    maxIdleMs: int(o.maxIdleMs, "maxIdleMs", o.store.onEarlierDue ? 30_000 : 1000, 1, 3_600_000),
    leaseMs: int(o.leaseMs, "leaseMs", 60_000, 100, 86_400_000),
    handlerTimeoutMs: int(o.handlerTimeoutMs, "handlerTimeoutMs", 30_000, 1, 86_400_000),
    maxAttempts: int(o.maxAttempts, "maxAttempts", 3, 1, 1000),
    backoffBaseMs: int(o.backoffBaseMs, "backoffBaseMs", 1000, 0, 86_400_000),
    backoffMaxMs: int(o.backoffMaxMs, "backoffMaxMs", 3_600_000, 0, 30 * 86_400_000),
    leaseSweepIntervalMs: int(o.leaseSweepIntervalMs, "leaseSweepIntervalMs", 5000, 10, 3_600_000),
    retentionMs: int(o.retentionMs, "retentionMs", 7 * 86_400_000, 0, 3650 * 86_400_000),
    retentionIntervalMs: int(o.retentionIntervalMs, "retentionIntervalMs", 60_000, 10, 86_400_000),
    maxPayloadBytes: int(o.maxPayloadBytes, "maxPayloadBytes", 65_536, 2, 16 * 1024 * 1024),
    maxPastMs:
      o.maxPastMs === undefined || o.maxPastMs === null
        ? null
        : int(o.maxPastMs, "maxPastMs", 0, 0, Number.MAX_SAFE_INTEGER),
    maxHeld: int(o.maxHeld, "maxHeld", 10_000, 1, 10_000_000),
    clockJumpThresholdMs: int(o.clockJumpThresholdMs, "clockJumpThresholdMs", 1000, 10, 86_400_000),
    clockCheckIntervalMs: int(o.clockCheckIntervalMs, "clockCheckIntervalMs", 1000, 10, 3_600_000),
    clockSkewWarnMs: int(o.clockSkewWarnMs, "clockSkewWarnMs", 1000, 1, 86_400_000),
    clockSkewCheckIntervalMs: int(
      o.clockSkewCheckIntervalMs,
      "clockSkewCheckIntervalMs",
      60_000,
      100,
      86_400_000,
    ),
    shards: o.shards,
    admit: o.admit,
  };
  if (r.stageAheadMs < r.horizonMs) {
    throw new InvalidOptionError(
      "stageAheadMs",
      `at least horizonMs (${r.horizonMs})`,
      r.stageAheadMs,
    );
  }
  if (r.handlerTimeoutMs + r.horizonMs >= r.leaseMs) {
    throw new InvalidOptionError(
      "leaseMs",
      `more than handlerTimeoutMs + horizonMs (${r.handlerTimeoutMs + r.horizonMs}) so a live claim never expires`,
      r.leaseMs,
    );
  }
  return Object.freeze(r);
}

function int(value: unknown, name: string, dflt: number, min: number, max: number): number {
  if (value === undefined) return dflt;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(name, `an integer from ${min} to ${max}`, value);
  }
  return value;
}
