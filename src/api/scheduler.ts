import { EventEmitter } from "node:events";
import { bucketOf } from "../core/buckets.js";
import type { Clock } from "../core/clock.js";
import { InvalidJobError } from "../core/errors.js";
import { createIdGenerator } from "../core/ids.js";
import type { Job, JobStatus, NewJob } from "../core/job.js";
import {
  MAX_KEY_LENGTH,
  validateScheduleInput,
  validateScheduleInputs,
  type PrepareItem,
  type ScheduleContext,
  type ScheduleInput,
} from "../core/schedule-input.js";
import { DUE_TIME_FIELDS, resolveDueTime, type DueTimeFields } from "../core/due-time.js";
import { rejectUnknownFields, requireInteger, requireString } from "../core/validate.js";
import type { BucketCount, CancelResult, RescheduleResult, Store } from "../store/store.js";
import type { DispatchOutcome, Handler } from "../engine/dispatcher.js";
import type { FairShare } from "../engine/fair-queue.js";
import { Engine } from "../engine/engine.js";
import type { Logger } from "../engine/logger.js";
import {
  publicOptions,
  resolveOptions,
  type SchedulerSettings,
  type SchedulerOptions,
} from "../engine/options.js";
import { decodeCursor, encodeCursor, parseListQuery, type ListQuery } from "./list-query.js";
import { LatenessRecorder, type LatenessSummary } from "./lateness.js";
import { ActivityRecorder } from "./activity.js";
import type { JobChange, SchedulerEvents } from "./scheduler-events.js";
import type { ClockJumpSummary } from "../engine/clock-jumps.js";

export type { JobChange, SchedulerEvents } from "./scheduler-events.js";
export type { BucketCount, CancelResult, RescheduleResult } from "../store/store.js";

/** A due time: epoch ms, a Date, or a text (ISO with offset, "in 10 minutes", "tomorrow 9am"). */
export type DueTime = number | Date | string;

/**
 * How far in the past a due time given to this call may be, in ms; `null` accepts any (the
 * job is overdue and runs at once). Default: the scheduler's `maxPastMs`. The one past-time
 * check of every surface: schedule, scheduleMany, reschedule and retry apply it.
 */
export interface PastTimePolicy {
  readonly maxPastMs?: number | null;
}

/** Options of `scheduleMany`. */
export interface ScheduleManyOptions extends PastTimePolicy {
  /** Maps each raw item to a ScheduleInput first; its InvalidJobError counts as the item's. */
  readonly prepare?: PrepareItem;
}

/** Options of `reschedule` and `retry`. */
export interface MoveOptions extends PastTimePolicy {
  readonly tenant?: string;
  /** Apply only if the job is still at this version. */
  readonly expectedVersion?: number;
  /** IANA zone for a wall-time or natural-language due time. Default: the `timeZone` option. */
  readonly timeZone?: string;
  /** Language of a natural-language due time ("fr"). Default English. */
  readonly locale?: string;
}

/** What `storeInfo` tells of the store, without handing it out. */
export interface StoreInfo {
  /** "sqlite" or "postgres". */
  readonly kind: string;
  readonly bucketWidthMs: number;
  readonly shardCount: number;
  /** Whether the store has a clock of its own (PostgreSQL), checked for skew. */
  readonly ownClock: boolean;
}

/** What `schedule` resolves to. */
export interface ScheduleResult {
  readonly job: Job;
  /** False when the idempotency key matched a live job, which is returned instead. */
  readonly created: boolean;
}

export interface ListPage {
  readonly jobs: Job[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  readonly nextCursor: string | null;
}

export interface SchedulerStats {
  readonly counts: Record<JobStatus, number>;
  /** Pending jobs per bucket, overdue buckets included, up to `buckets` ahead of now. */
  readonly buckets: BucketCount[];
  readonly bucketWidthMs: number;
  /** Lateness of jobs fired by this process since it started. */
  readonly lateness: LatenessSummary;
  /** Jobs claimed by this process and not yet settled. */
  readonly inFlight: number;
  /** This process's clock: jumps noticed since it started, and its skew against the store's. */
  readonly clock: ClockStats;
}

export interface ClockStats {
  /** Wall-clock jumps noticed (wall clock against the monotonic clock) while started. */
  readonly jumps: ClockJumpSummary;
  /**
   * This node's clock minus the store's at the latest check, ms (stores with a clock of their
   * own: PostgreSQL), or null.
   */
  readonly skewMs: number | null;
}

/**
 * The library's entry point: schedule and manage jobs in a store, and (after `start`) fire
 * them with registered handlers.
 */
export class Scheduler extends EventEmitter<SchedulerEvents> {
  /** The resolved options, but the store and the clock: reach those through the methods. */
  readonly options: SchedulerSettings;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly newId: () => string;
  private readonly handlers = new Map<string, Handler>();
  private fallback: Handler | undefined;
  private fallbackShare: FairShare | undefined;
  private readonly lateness = new LatenessRecorder();
  /** Per-minute outcomes and lateness of what this process fired (last hour). */
  readonly activity = new ActivityRecorder();
  private readonly engine: Engine;

  constructor(options: SchedulerOptions) {
    super();
    const o = resolveOptions(options);
    this.options = publicOptions(o);
    this.store = o.store;
    this.clock = o.clock;
    this.logger = o.logger;
    this.newId = createIdGenerator(() => this.clock.now());
    this.engine = new Engine({
      options: o,
      handlers: this.handlers,
      fallbackHandler: () => this.fallback,
      fallbackFairShare: () => this.fallbackShare,
      onOutcome: (outcome) => this.report(outcome),
      onClockJump: (jump) => this.emit("clockJump", jump),
    });
  }

  /** Registers the handler for jobs whose target is `name`. */
  handle(name: string, handler: Handler): this {
    if (typeof name !== "string" || name === "") {
      throw new InvalidJobError("name", "a non-empty handler name", name);
    }
    if (typeof handler !== "function") throw new InvalidJobError("handler", "a function", handler);
    this.handlers.set(name, handler);
    return this;
  }

  /**
   * Registers the handler for jobs whose target has no named handler (the HTTP service uses
   * it to deliver webhooks to URL targets). With `fairShare`, its jobs wait in one lane per
   * key within their tenant, each lane running at most `fairShare.concurrency` at once
   * (webhooks: per origin); without it they share one lane like a named handler's.
   */
  handleOther(handler: Handler, opts: { fairShare?: FairShare } = {}): this {
    if (typeof handler !== "function") throw new InvalidJobError("handler", "a function", handler);
    const share = opts.fairShare;
    if (share !== undefined) {
      if (typeof share.keyOf !== "function") {
        throw new InvalidJobError("fairShare.keyOf", "a function", share.keyOf);
      }
      if (!Number.isInteger(share.concurrency) || share.concurrency < 1) {
        throw new InvalidJobError(
          "fairShare.concurrency",
          "an integer of at least 1",
          share.concurrency,
        );
      }
    }
    this.fallback = handler;
    this.fallbackShare = share;
    return this;
  }

  /** Schedules one job. Resolves to the stored job (or the live job holding its key). */
  async schedule(input: ScheduleInput, opts: PastTimePolicy = {}): Promise<ScheduleResult> {
    const ctx = this.scheduleContext(opts);
    const [result] = await this.insert([validateScheduleInput(input, ctx)], ctx.now);
    return result!;
  }

  /**
   * Schedules many jobs in one transaction: all are validated first and either all are stored
   * or none. Bad items throw one InvalidJobsError listing each (`jobs[3].dueAt`, ...).
   */
  async scheduleMany(
    inputs: readonly ScheduleInput[] | readonly unknown[],
    opts: ScheduleManyOptions = {},
  ): Promise<ScheduleResult[]> {
    if (!Array.isArray(inputs)) throw new InvalidJobError("jobs", "an array of jobs", inputs);
    const ctx = this.scheduleContext(opts);
    const jobs = validateScheduleInputs(inputs, ctx, "jobs", opts.prepare);
    if (jobs.length === 0) return [];
    return this.insert(jobs, ctx.now);
  }

  private scheduleContext(opts: PastTimePolicy): ScheduleContext {
    return {
      now: this.clock.now(),
      newId: this.newId,
      defaultTenant: this.options.defaultTenant,
      defaultMaxAttempts: this.options.maxAttempts,
      maxPayloadBytes: this.options.maxPayloadBytes,
      maxPastMs: this.pastLimit(opts),
      defaultTimeZone: this.options.timeZone,
    };
  }

  /** The call's past-time tolerance, else the scheduler's. */
  private pastLimit(opts: PastTimePolicy): number | null {
    const given = opts.maxPastMs;
    if (given === undefined) return this.options.maxPastMs;
    if (given === null) return null;
    return requireInteger(given, "maxPastMs", 0, Number.MAX_SAFE_INTEGER);
  }

  private async insert(jobs: NewJob[], now: number): Promise<ScheduleResult[]> {
    const admit = this.options.admit;
    if (admit) {
      const perTenant = new Map<string, number>();
      for (const j of jobs) perTenant.set(j.tenant, (perTenant.get(j.tenant) ?? 0) + 1);
      for (const [tenant, n] of perTenant) await admit({ tenant, jobs: n });
    }
    const results = await this.store.jobsInsert({ jobs, now });
    let earliest = Infinity;
    for (const r of results) if (r.created && r.job.dueAt < earliest) earliest = r.job.dueAt;
    if (earliest !== Infinity) this.engine.wakeFor(earliest);
    if (this.listenerCount("changed") > 0) {
      for (const r of results) if (r.created) this.changed("scheduled", r.job);
    }
    return results;
  }

  /** One job, or null. With `tenant`, another tenant's job is null too. */
  async get(id: string, opts: { tenant?: string } = {}): Promise<Job | null> {
    if (typeof id !== "string") throw new InvalidJobError("id", "a job id string", id);
    return this.store.jobGet({ id, ...opts });
  }

  /** The live job of `tenant` (default: the default tenant) holding idempotency key `key`, or null. */
  async getByKey(key: string, opts: { tenant?: string } = {}): Promise<Job | null> {
    requireString(key, "key", { max: MAX_KEY_LENGTH });
    return this.store.jobGetByKey({ tenant: opts.tenant ?? this.options.defaultTenant, key });
  }

  /** Now on the scheduler's clock (epoch ms): the "now" its due times are read against. */
  now(): number {
    return this.clock.now();
  }

  /** Jobs by state, from the store's counters (no row counting). */
  counts(opts: { tenant?: string } = {}): Promise<Record<JobStatus, number>> {
    return this.store.jobsCountByStatus(opts);
  }

  /** Pending jobs per bucket starting in [from, to), from the per-bucket counters. */
  bucketCounts(opts: { from: number; to: number; tenant?: string }): Promise<BucketCount[]> {
    return this.store.bucketsCounts(opts);
  }

  /**
   * The tenant's pending job due earliest, if it is due already. The store's next-due answer
   * (the head of the hot index and the earliest unstaged bucket) settles the usual case,
   * nothing overdue for anyone, without touching job rows; otherwise one listing stops at the
   * first pending row due before now.
   */
  async oldestOverdue(opts: { tenant?: string } = {}): Promise<Job | null> {
    const now = this.clock.now();
    const next = await this.store.jobsNextDue({ now });
    const due = (t: number | null) => t !== null && t <= now;
    if (!due(next.earliestDue) && !due(next.nextUnstagedBucket)) return null;
    const [first] = await this.store.jobsList({
      ...opts,
      statuses: ["pending"],
      dueTo: now + 1,
      limit: 1,
    });
    return first ?? null;
  }

  /** The store's kind and layout (bucket width, shards). */
  storeInfo(): StoreInfo {
    const st = this.store;
    return {
      kind: st.kind,
      bucketWidthMs: st.bucketWidthMs,
      shardCount: st.shardCount,
      ownClock: st.clockRead !== undefined,
    };
  }

  /**
   * Applies the store's pending schema migrations (opening a store migrates it too; this is
   * for deploy steps that migrate before rolling out nodes).
   */
  async migrate(): Promise<StoreInfo> {
    await this.store.migrate();
    return this.storeInfo();
  }

  /** A page of jobs in due order; filters by status and due range. */
  async list(query: ListQuery = {}): Promise<ListPage> {
    const q = parseListQuery(query, this.clock.now());
    const jobs = await this.store.jobsList({
      ...q.filter,
      ...(q.cursor === undefined ? {} : { after: decodeCursor(q.cursor) }),
      limit: q.limit + 1,
    });
    const more = jobs.length > q.limit;
    const page = more ? jobs.slice(0, q.limit) : jobs;
    const last = page[page.length - 1];
    return { jobs: page, nextCursor: more && last ? encodeCursor(last) : null };
  }

  /**
   * Cancels a pending job: `cancelled`; `too-late` when it is firing or finished (the result
   * carries it); `not-found`.
   */
  async cancel(id: string, opts: { tenant?: string } = {}): Promise<CancelResult> {
    if (typeof id !== "string") throw new InvalidJobError("id", "a job id string", id);
    const r = await this.store.jobCancel({ id, now: this.clock.now(), ...opts });
    if (r.outcome === "cancelled") this.changed("cancelled", r.job);
    return r;
  }

  /**
   * Moves a pending job to a new due time (snooze): `dueAt` as schedule reads it, or the
   * fields `{ dueAt, timeZone }` / `{ delayMs }`. With `expectedVersion` it applies only if
   * nobody changed the job since. Outcomes: rescheduled, too-late, version-conflict, not-found.
   */
  async reschedule(
    id: string,
    dueAt: DueTime | DueTimeFields,
    opts: MoveOptions = {},
  ): Promise<RescheduleResult> {
    return this.move("reschedule", id, dueAt, opts);
  }

  /**
   * Puts a dead job back to pending with fresh attempts, due at `dueAt` (or `delayMs` from
   * now; default now).
   */
  async retry(
    id: string,
    opts: MoveOptions & { dueAt?: DueTime; delayMs?: number } = {},
  ): Promise<RescheduleResult> {
    const { dueAt, delayMs, ...rest } = opts;
    const when =
      dueAt === undefined && delayMs === undefined ? this.clock.now() : { dueAt, delayMs };
    return this.move("retry", id, when, rest);
  }

  private async move(
    kind: "reschedule" | "retry",
    id: string,
    when: DueTime | DueTimeFields,
    opts: MoveOptions,
  ): Promise<RescheduleResult> {
    if (typeof id !== "string") throw new InvalidJobError("id", "a job id string", id);
    const now = this.clock.now();
    const fields = dueTimeFields(when, opts);
    const dueAt = resolveDueTime(fields, {
      now,
      maxPastMs: this.pastLimit(opts),
      defaultTimeZone: this.options.timeZone,
    });
    // a safe integer: past that PostgreSQL answers an error for the bigint, not a conflict
    if (opts.expectedVersion !== undefined) {
      requireInteger(opts.expectedVersion, "expectedVersion", 0, Number.MAX_SAFE_INTEGER);
    }
    const params = {
      id,
      dueAt,
      now,
      ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
      ...(opts.expectedVersion === undefined ? {} : { expectedVersion: opts.expectedVersion }),
    };
    const r =
      kind === "reschedule"
        ? await this.store.jobReschedule(params)
        : await this.store.jobRetry(params);
    if (r.outcome === "rescheduled") {
      this.engine.wakeFor(dueAt);
      this.changed(kind === "reschedule" ? "rescheduled" : "retried", r.job);
    }
    return r;
  }

  /** Counts by state, the pending histogram by bucket, lateness and in-flight work. */
  async stats(opts: { tenant?: string; buckets?: number } = {}): Promise<SchedulerStats> {
    const width = this.store.bucketWidthMs;
    // Overdue buckets still holding work are included: they are the catch-up backlog.
    const to = bucketOf(this.clock.now(), width) + width * (opts.buckets ?? 48);
    const tenant = opts.tenant === undefined ? {} : { tenant: opts.tenant };
    const [counts, buckets] = await Promise.all([
      this.store.jobsCountByStatus(tenant),
      this.store.bucketsCounts({ from: 0, to, ...tenant }),
    ]);
    return {
      counts,
      buckets,
      bucketWidthMs: width,
      lateness: this.lateness.summary(),
      inFlight: this.engine.inFlight,
      clock: {
        jumps: this.engine.clockJumps.summary(),
        skewMs: this.engine.clockSkew?.last?.skewMs ?? null,
      },
    };
  }

  /**
   * Starts firing: the watcher, the lease sweeper, retention, and whatever the store runs
   * for a firing node (PostgreSQL: shard leases and partition maintenance).
   */
  start(): void {
    this.engine.start();
  }

  /**
   * Stops claiming, hands back claimed jobs that have not started (pending again, attempt
   * not counted), waits up to `timeoutMs` (default 10 s) for running handlers, then records
   * their outcomes. Handlers still running after the timeout are aborted; their jobs come
   * back when the lease runs out. Every step runs even when one fails; the failures are
   * thrown at the end (an AggregateError when several). Outcomes the store still refuses
   * at the timeout (at least 1 s after the handlers) are left to their leases and reported
   * as an OutcomesNotRecordedError with their count.
   */
  stop(opts: { timeoutMs?: number } = {}): Promise<void> {
    return this.engine.stop(opts);
  }

  /**
   * Stops (as `stop`) and closes the store, even when stopping failed: then the stop's
   * error is thrown once the store is closed (with the close's, if that failed too).
   */
  async close(opts: { timeoutMs?: number } = {}): Promise<void> {
    const stopped = await this.stop(opts).then(
      () => null,
      (err: unknown) => ({ err }),
    );
    try {
      await this.store.close();
    } catch (err) {
      if (stopped) throw new AggregateError([stopped.err, err], "closing the scheduler");
      throw err;
    }
    if (stopped) throw stopped.err;
  }

  /** Runs one watcher pass now (tests and tools); returns what it did. */
  runOnce(): ReturnType<Engine["runOnce"]> {
    return this.engine.runOnce();
  }

  /** Sweeps expired leases now. */
  sweepLeases(): ReturnType<Engine["sweepLeases"]> {
    return this.engine.sweepLeases();
  }

  /** Runs retention now; resolves to the number of jobs removed. */
  purgeHistory(): Promise<number> {
    return this.engine.purgeHistory();
  }

  /** Resolves when nothing claimed by this process is still waiting or running. */
  idle(): Promise<void> {
    return this.engine.idle();
  }

  private changed(kind: JobChange["kind"], job: Job, status: JobStatus = job.status): void {
    if (this.listenerCount("changed") === 0) return;
    this.emit("changed", {
      kind,
      id: job.id,
      tenant: job.tenant,
      status,
      dueAt: job.dueAt,
      at: this.clock.now(),
    });
  }

  private report(o: DispatchOutcome): void {
    if (o.kind === "succeeded" || o.kind === "failed" || o.kind === "dead")
      this.lateness.record(o.latenessMs);
    if (o.applied) {
      this.activity.record(
        { kind: o.kind, tenant: o.job.tenant, at: this.clock.now() },
        o.latenessMs,
      );
    }
    if (!o.applied) {
      this.logger.warn(
        { id: o.job.id, kind: o.kind },
        "outcome not recorded: the claim was lost (lease expired)",
      );
      return;
    }
    switch (o.kind) {
      case "succeeded": {
        const done = { job: o.job, latenessMs: o.latenessMs, result: o.result };
        this.emit("succeeded", done);
        // The deprecated alias, emitted beside it until the next release (see SchedulerEvents).
        this.emit("fired", done);
        this.changed("succeeded", o.job, "succeeded");
        break;
      }
      case "failed":
        this.emit("failed", {
          job: o.job,
          latenessMs: o.latenessMs,
          error: o.error,
          retryAt: o.retryAt,
        });
        this.changed("failed", { ...o.job, dueAt: o.retryAt }, "pending");
        break;
      case "deferred":
        this.emit("deferred", {
          job: o.job,
          latenessMs: o.latenessMs,
          error: o.error,
          retryAt: o.retryAt,
        });
        this.changed("deferred", { ...o.job, dueAt: o.retryAt }, "pending");
        // The watcher planned its sleep while the job was claimed: a short backoff would
        // otherwise wait for its next poll.
        this.engine.wakeFor(o.retryAt);
        break;
      case "dead":
        this.emit("dead", { job: o.job, latenessMs: o.latenessMs, error: o.error });
        this.changed("dead", o.job, "dead");
        break;
      case "expired":
        this.emit("expired", { job: o.job, latenessMs: o.latenessMs });
        this.changed("expired", o.job, "expired");
        break;
    }
  }
}

/**
 * A move's due time as resolveDueTime reads it: a bare time (with the call's `timeZone`),
 * or the fields of a reschedule body, nothing else.
 */
function dueTimeFields(when: DueTime | DueTimeFields, opts: MoveOptions): DueTimeFields {
  if (typeof when === "object" && when !== null && !(when instanceof Date)) {
    rejectUnknownFields(when as Record<string, unknown>, DUE_TIME_FIELDS, "");
    return when;
  }
  return {
    dueAt: when,
    ...(opts.timeZone === undefined ? {} : { timeZone: opts.timeZone }),
    ...(opts.locale === undefined ? {} : { locale: opts.locale }),
  };
}
