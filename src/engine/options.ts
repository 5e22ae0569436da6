import { hostname } from "node:os";
import { createHash, randomBytes } from "node:crypto";
import type { Clock } from "../core/clock.js";
import { systemClock } from "../core/clock.js";
import { InvalidOptionError } from "../core/errors.js";
import { assertTimeZone } from "../core/time-input.js";
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
  /**
   * Stable name of this node, the same across its restarts: claims are leased to
   * `<nodeName>/<incarnation>` (a fresh incarnation each start), so a restarted node knows
   * the claims its dead predecessor held and gives them back at once instead of waiting
   * for their leases (see docs/reliability.md). On PostgreSQL it is also the node's name in
   * the shard leases, so a restart keeps its shards. Two live processes must not share a
   * name. 1 to 150 characters, no "/" and no control characters. Default: the host name and
   * a short hash of the store's location (`host-1a2b3c4d`).
   */
  readonly nodeName?: string;
  /** @deprecated The old name of `nodeName`; used as `nodeName` when that is not given. */
  readonly nodeId?: string;
  /** Tenant of jobs scheduled without one. Default "default". */
  readonly defaultTenant?: string;
  /**
   * IANA zone in which a due time written as a wall time ("2026-12-03T10:00:00") or in words
   * ("tomorrow 9am") is read when the call names none. Default "UTC".
   */
  readonly timeZone?: string;
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
   * (writes in this process wake it at once). Default 1000; 60000 for a store that announces
   * other processes' writes (PostgreSQL LISTEN/NOTIFY, where it only covers a notification
   * lost without the connection dropping: a reconnect wakes the watcher at once).
   */
  readonly maxIdleMs?: number;
  /**
   * Lease of a claim: renewed every `leaseRenewIntervalMs` while this process holds the
   * job (waiting in memory or running); a job whose holder stopped renewing comes back
   * once it runs out. Default 15000.
   */
  readonly leaseMs?: number;
  /**
   * How often the leases of held jobs are renewed (one statement for all of them), and how
   * soon a restarted node gives back its dead predecessor's claims: those not renewed for
   * 1.5 intervals. At most a third of `leaseMs`. Default 2000 (a third of `leaseMs` when
   * that is shorter).
   */
  readonly leaseRenewIntervalMs?: number;
  /** A handler running longer than this fails its attempt (its AbortSignal fires). Default 30000. */
  readonly handlerTimeoutMs?: number;
  /** Default max attempts of a job. Default 3. */
  readonly maxAttempts?: number;
  /** First retry delay; doubles each attempt, with jitter. Default 1000. */
  readonly backoffBaseMs?: number;
  /** Cap on the retry delay. Default 3600000 (one hour). */
  readonly backoffMaxMs?: number;
  /**
   * Longest pause of the lease sweeper, ms. It sweeps when the earliest lease it knows of
   * (read at each sweep, any node's, and each claim of this node's) can have run out; this
   * bounds how late it notices a lease another node took since it last looked. Default
   * 1000; 60000 for a store whose nodes learn of a dead peer at once and end its leases
   * (PostgreSQL's node services).
   */
  readonly leaseSweepIntervalMs?: number;
  /** How long finished jobs are kept. Default 604800000 (7 days). */
  readonly retentionMs?: number;
  /**
   * How long the change feed keeps a change, in ms (readers resuming from an older cursor
   * are told to start again). Default 604800000 (7 days).
   */
  readonly changeRetentionMs?: number;
  /**
   * How often retention runs. Default 300000 (5 minutes: finished jobs are kept for days,
   * a few minutes more cost nothing, and an idle node's database stays quiet).
   */
  readonly retentionIntervalMs?: number;
  /**
   * Jobs a bulk operation's batch reads (one store transaction each; see
   * docs/managing-jobs.md). Default 2000.
   */
  readonly operationBatchSize?: number;
  /**
   * How often, in ms, a node with no bulk operation running looks for one queued by another
   * node (or left unfinished by a node that stopped); a start on this node runs at once.
   * Default 5000, or 60000 on a store shared by many nodes (PostgreSQL), where each look is a
   * transaction of every idle node and the node that queued an operation already runs it.
   */
  readonly operationIdleMs?: number;
  /**
   * How often the pause keeper looks for pause work made by another process sharing the
   * store (this node's own pause and resume wake it at once), in ms. Default 5000, or
   * 60000 on a store that notifies every node of pauses and resumes (PostgreSQL: the look
   * is then only a fallback for a notification lost while not listening).
   */
  readonly pauseWorkIntervalMs?: number;
  /**
   * Most open (active or resuming) pauses one tenant may have; one more is refused with a
   * QuotaExceededError (quota `openPauses`; over HTTP 429). Default 100.
   */
  readonly maxOpenPauses?: number;
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
   * Most of those held jobs one tenant may have. Claims take turns per tenant once a tenant
   * nears it, so a tenant with more due jobs than the held set can take leaves room for the
   * others' due jobs to be claimed at once instead of waiting behind its backlog in the
   * store. Default: maxHeld minus a tenth of it (9000 of 10000; all of it below 10).
   */
  readonly tenantMaxHeld?: number;
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
   * Admission of new jobs: called by `schedule`, `scheduleMany` and `scheduleRecurring` (a
   * new series asks for 1: its pending occurrence) after validation and before anything is
   * written, once per tenant with the number of jobs it asks for; a throw
   * (QuotaExceededError) refuses the whole call. The service's per-tenant quotas
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
  Required<Omit<SchedulerOptions, "shards" | "maxPastMs" | "admit" | "nodeId">> & {
    shards: (() => readonly number[] | undefined) | undefined;
    admit: SchedulerOptions["admit"];
    maxPastMs: number | null;
    /** Lease owner of this start's claims: `<nodeName>/<incarnation>`. */
    leaseOwner: string;
  }
>;

/**
 * What a Scheduler shows of its resolved options (`scheduler.options`): all but the store and
 * the clock. Adapters reach the jobs and the time through the Scheduler's methods (`now()`,
 * `get`, `counts`...), never past it; only the engine is handed the store and the clock.
 */
export type SchedulerSettings = Readonly<Omit<ResolvedOptions, "store" | "clock">>;

/** The resolved options without the store and the clock, frozen. */
export function publicOptions(o: ResolvedOptions): SchedulerSettings {
  const rest: Record<string, unknown> = { ...o };
  delete rest.store;
  delete rest.clock;
  return Object.freeze(rest) as SchedulerSettings;
}

/** Defaults applied into a new frozen object; the caller's object is never mutated. */
export function resolveOptions(o: SchedulerOptions): ResolvedOptions {
  if (!o || typeof o.store !== "object" || o.store === null) {
    throw new InvalidOptionError("store", "a Store (see openStore)", o?.store);
  }
  const concurrency = int(o.concurrency, "concurrency", 100, 1, 100_000);
  const maxHeld = int(o.maxHeld, "maxHeld", 10_000, 1, 10_000_000);
  const r = {
    store: o.store,
    clock: o.clock ?? systemClock(),
    logger: o.logger ?? defaultLogger(),
    nodeName: nodeName(o),
    leaseOwner: "",
    defaultTenant: o.defaultTenant ?? "default",
    timeZone: optionTimeZone(o.timeZone),
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
    maxIdleMs: int(o.maxIdleMs, "maxIdleMs", o.store.onEarlierDue ? 60_000 : 1000, 1, 3_600_000),
    leaseMs: int(o.leaseMs, "leaseMs", 15_000, 300, 86_400_000),
    leaseRenewIntervalMs: 0,
    handlerTimeoutMs: int(o.handlerTimeoutMs, "handlerTimeoutMs", 30_000, 1, 86_400_000),
    maxAttempts: int(o.maxAttempts, "maxAttempts", 3, 1, 1000),
    backoffBaseMs: int(o.backoffBaseMs, "backoffBaseMs", 1000, 0, 86_400_000),
    backoffMaxMs: int(o.backoffMaxMs, "backoffMaxMs", 3_600_000, 0, 30 * 86_400_000),
    leaseSweepIntervalMs: int(
      o.leaseSweepIntervalMs,
      "leaseSweepIntervalMs",
      o.store.nodeStart ? 60_000 : 1000,
      10,
      3_600_000,
    ),
    retentionMs: int(o.retentionMs, "retentionMs", 7 * 86_400_000, 0, 3650 * 86_400_000),
    changeRetentionMs: int(
      o.changeRetentionMs,
      "changeRetentionMs",
      7 * 86_400_000,
      0,
      3650 * 86_400_000,
    ),
    retentionIntervalMs: int(o.retentionIntervalMs, "retentionIntervalMs", 300_000, 10, 86_400_000),
    operationBatchSize: int(o.operationBatchSize, "operationBatchSize", 2000, 1, 100_000),
    operationIdleMs: int(
      o.operationIdleMs,
      "operationIdleMs",
      o.store.onEarlierDue ? 60_000 : 5000,
      10,
      3_600_000,
    ),
    pauseWorkIntervalMs: int(
      o.pauseWorkIntervalMs,
      "pauseWorkIntervalMs",
      o.store.pauses?.onPausesChanged ? 60_000 : 5000,
      10,
      3_600_000,
    ),
    maxOpenPauses: int(o.maxOpenPauses, "maxOpenPauses", 100, 1, 100_000),
    maxPayloadBytes: int(o.maxPayloadBytes, "maxPayloadBytes", 65_536, 2, 16 * 1024 * 1024),
    maxPastMs:
      o.maxPastMs === undefined || o.maxPastMs === null
        ? null
        : int(o.maxPastMs, "maxPastMs", 0, 0, Number.MAX_SAFE_INTEGER),
    maxHeld,
    tenantMaxHeld: int(
      o.tenantMaxHeld,
      "tenantMaxHeld",
      maxHeld - Math.floor(maxHeld / 10),
      1,
      maxHeld,
    ),
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
  r.leaseRenewIntervalMs = int(
    o.leaseRenewIntervalMs,
    "leaseRenewIntervalMs",
    Math.min(2000, Math.floor(r.leaseMs / 3)),
    100,
    28_800_000,
  );
  // Renewal, not the lease's length, keeps a long handler's claim: several renewals must
  // fit in one lease, so a database hiccup that delays one or two does not lose it.
  if (r.leaseRenewIntervalMs * 3 > r.leaseMs) {
    throw new InvalidOptionError(
      "leaseRenewIntervalMs",
      `at most a third of leaseMs (${Math.floor(r.leaseMs / 3)})`,
      r.leaseRenewIntervalMs,
    );
  }
  r.leaseOwner = `${r.nodeName}/${incarnation()}`;
  return Object.freeze(r);
}

/**
 * A fresh incarnation per start: the start time (base 36, so later starts sort after
 * earlier ones) and a random suffix, so two starts in one millisecond still differ.
 */
function incarnation(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
}

function nodeName(o: SchedulerOptions): string {
  const given = o.nodeName ?? o.nodeId;
  if (given === undefined) {
    const where = createHash("sha256").update(o.store.location).digest("hex").slice(0, 8);
    return `${hostname()
      .replace(/[/\p{Cc}]/gu, "_")
      .slice(0, 140)}-${where}`;
  }
  if (
    typeof given !== "string" ||
    given.length === 0 ||
    given.length > 150 ||
    /[/\p{Cc}]/u.test(given)
  ) {
    throw new InvalidOptionError(
      o.nodeName === undefined ? "nodeId" : "nodeName",
      'a name of 1 to 150 characters without "/" or control characters',
      given,
    );
  }
  return given;
}

function int(value: unknown, name: string, dflt: number, min: number, max: number): number {
  if (value === undefined) return dflt;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(name, `an integer from ${min} to ${max}`, value);
  }
  return value;
}

function optionTimeZone(zone: unknown): string {
  if (zone === undefined) return "UTC";
  try {
    assertTimeZone(zone, "timeZone");
  } catch {
    throw new InvalidOptionError("timeZone", "an IANA time zone name such as Europe/Paris", zone);
  }
  return zone;
}
