import { inScheduleSpan, withTraceContext } from "../engine/tracing.js";
import { EventEmitter } from "node:events";
import { bucketOf } from "../core/buckets.js";
import type { Clock } from "../core/clock.js";
import { InvalidJobError } from "../core/errors.js";
import { createIdGenerator } from "../core/ids.js";
import type { Job, JobStatus, NewJob } from "../core/job.js";
import {
  validateScheduleInput,
  validateScheduleInputs,
  type ScheduleContext,
  type ScheduleInput,
} from "../core/schedule-input.js";
import { requireInteger } from "../core/validate.js";
import { insertPlaced, type BucketCount, type CancelResult, type Store } from "../store/store.js";
import type { Handler } from "../engine/dispatcher.js";
import type { FairShare } from "../engine/fair-queue.js";
import { Engine } from "../engine/engine.js";
import {
  publicOptions,
  resolveOptions,
  type SchedulerSettings,
  type SchedulerOptions,
} from "../engine/options.js";
import {
  decodeCursor,
  encodeCursor,
  parseListQuery,
  type CountQuery,
  type ListQuery,
} from "./list-query.js";
import { listByTag } from "./tag-list.js";
import { LatenessRecorder } from "./lateness.js";
import { ActivityRecorder } from "./activity.js";
import { HandlerRegistry } from "./handler-registry.js";
import { OutcomeEvents } from "./outcome-events.js";
import { SeriesOperations } from "./series.js";
import { seriesMethods, type SeriesMethods } from "./series-methods.js";
import { BulkOperations, operationMethods, type OperationMethods } from "./operations.js";
import { byKeyMethods, type ByKeyMethods, type ByKeyParts } from "./by-key.js";
import { JobMoves, moveMethods, type MoveMethods } from "./job-moves.js";
import { installMethods } from "./install-methods.js";
import type { SchedulerEvents } from "./scheduler-events.js";
import type {
  ListPage,
  PastTimePolicy,
  ScheduleManyOptions,
  ScheduleResult,
  SchedulerStats,
  StoreInfo,
} from "./scheduler-types.js";
import { readChangesPage, type ChangesQuery } from "./change-feed.js";
import type { ChangesPage } from "../core/change.js";
import { PauseOperations, pauseMethods, type PauseMethods } from "./pauses.js";

export type * from "./scheduler-exports.js";

/**
 * The library's entry point: schedule and manage jobs in a store, and (after `start`) fire
 * them with registered handlers. The series, bulk operation, pause, by-key and move methods
 * are written beside their modules (series-methods.ts, operations.ts, pauses.ts, by-key.ts,
 * job-moves.ts) and installed on the prototype in the static block; the interface below
 * declares them.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the merged interface's methods are installed by installMethods from tables typed by those same interfaces
export interface Scheduler
  extends SeriesMethods, OperationMethods, PauseMethods, ByKeyMethods, MoveMethods {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see above
export class Scheduler extends EventEmitter<SchedulerEvents> {
  /** The resolved options, but the store and the clock: reach those through the methods. */
  readonly options: SchedulerSettings;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly newId: () => string;
  private readonly handlers = new HandlerRegistry();
  private readonly lateness = new LatenessRecorder();
  /** Per-minute outcomes and lateness of what this process fired (last hour). */
  readonly activity = new ActivityRecorder();
  private readonly engine: Engine;
  private readonly events: OutcomeEvents;
  private readonly series: SeriesOperations;
  private readonly operations: BulkOperations;
  private readonly pauses: PauseOperations;
  private readonly moves: JobMoves;
  private readonly byKey: ByKeyParts;

  static {
    installMethods(
      Scheduler.prototype,
      seriesMethods((s: Scheduler) => s.series),
      operationMethods((s: Scheduler) => s.operations),
      pauseMethods((s: Scheduler) => s.pauses),
      byKeyMethods((s: Scheduler) => s.byKey),
      moveMethods((s: Scheduler) => s.moves),
    );
  }

  constructor(options: SchedulerOptions) {
    super();
    const o = resolveOptions(options);
    this.options = publicOptions(o);
    this.store = o.store;
    this.clock = o.clock;
    this.events = new OutcomeEvents(this, {
      clock: o.clock,
      logger: o.logger,
      lateness: this.lateness,
      activity: this.activity,
    });
    this.newId = createIdGenerator(() => this.clock.now());
    this.engine = new Engine({
      options: o,
      handlers: this.handlers.named,
      fallbackHandler: () => this.handlers.other,
      fallbackFairShare: () => this.handlers.fairShare,
      onOutcome: (outcome) => this.events.report(outcome),
      onClockJump: (jump) => this.emit("clockJump", jump),
    });
    this.series = new SeriesOperations(
      this.store,
      this.clock,
      () => this.scheduleContext({}),
      this.newId,
      (dueAt) => this.engine.wakeFor(dueAt),
      o.admit,
    );
    this.operations = new BulkOperations(this.store, this.clock, this.newId, {
      defaultTenant: o.defaultTenant,
      timeZone: o.timeZone,
      batchSize: o.operationBatchSize,
      wake: () => this.engine.operations.wake(),
    });
    this.pauses = new PauseOperations({
      store: this.store,
      clock: this.clock,
      newId: this.newId,
      defaultTenant: o.defaultTenant,
      maxOpenPauses: o.maxOpenPauses,
      work: () => this.engine.pauseWork(),
      handBack: (covered) => this.engine.handBack(covered),
    });
    this.moves = new JobMoves({
      store: this.store,
      clock: this.clock,
      defaultTimeZone: o.timeZone,
      pastLimit: (opts) => this.pastLimit(opts),
      getByKey: (key, opts) => this.getByKey(key, opts),
      wakeFor: (dueAt) => this.engine.wakeFor(dueAt),
      changed: (kind, job) => this.events.changed(kind, job),
    });
    this.byKey = {
      store: this.store,
      defaultTenant: o.defaultTenant,
      rescheduleKey: (key, dueAt, opts) => this.moves.move("reschedule", { key }, dueAt, opts),
    };
  }

  /** Registers the handler for jobs whose target is `name`. */
  handle(name: string, handler: Handler): this {
    this.handlers.add(name, handler);
    return this;
  }

  /**
   * Registers the handler for jobs whose target has no named handler (the HTTP service uses
   * it to deliver webhooks to URL targets). With `fairShare`, its jobs wait in one lane per
   * key within their tenant, each lane running at most `fairShare.concurrency` at once
   * (webhooks: per origin); without it they share one lane like a named handler's.
   */
  handleOther(handler: Handler, opts: { fairShare?: FairShare } = {}): this {
    this.handlers.addOther(handler, opts.fairShare);
    return this;
  }

  /** Schedules one job. Resolves to the stored job (or the live job holding its key). */
  schedule(input: ScheduleInput, opts: PastTimePolicy = {}): Promise<ScheduleResult> {
    return inScheduleSpan(1, async () => {
      const ctx = this.scheduleContext(opts);
      const [result] = await this.insert([validateScheduleInput(input, ctx)], ctx.now);
      return result!;
    });
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
    return inScheduleSpan(inputs.length, async () => {
      const ctx = this.scheduleContext(opts);
      const jobs = validateScheduleInputs(inputs, ctx, "jobs", opts.prepare);
      if (jobs.length === 0) return [];
      return this.insert(jobs, ctx.now);
    });
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
    const results = await this.store.jobsInsert({ jobs: withTraceContext(jobs), now });
    let earliest = Infinity;
    for (const r of results) if (insertPlaced(r) && r.job.dueAt < earliest) earliest = r.job.dueAt;
    if (earliest !== Infinity) this.engine.wakeFor(earliest);
    if (this.listenerCount("changed") > 0) {
      for (const r of results) {
        if (r.outcome === "created") this.events.changed("scheduled", r.job);
        else if (r.outcome === "replaced") this.events.changed("replaced", r.job);
      }
    }
    return results;
  }

  /** One job, or null. With `tenant`, another tenant's job is null too. */
  async get(id: string, opts: { tenant?: string } = {}): Promise<Job | null> {
    if (typeof id !== "string") throw new InvalidJobError("id", "a job id string", id);
    return this.store.jobGet({ id, ...opts });
  }

  /** Now on the scheduler's clock (epoch ms): the "now" its due times are read against. */
  now(): number {
    return this.clock.now();
  }

  /** Jobs by state, from the store's counters (no row counting). */
  counts(opts: { tenant?: string } = {}): Promise<Record<JobStatus, number>> {
    return this.store.jobsCountByStatus(opts);
  }

  /**
   * How many of a tenant's jobs carry `tag` (required), by status and due range: a count
   * over the tag index, whose cost tracks the tag's jobs, not the backlog.
   */
  async countJobs(query: CountQuery): Promise<number> {
    const q = parseListQuery(query, this.clock.now());
    const { tag, ...rest } = q.filter;
    if (tag === undefined) throw new InvalidJobError("tag", "a tag to count the jobs of", tag);
    return this.store.jobsCountByTag({
      ...rest,
      tenant: rest.tenant ?? this.options.defaultTenant,
      tag,
    });
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

  /**
   * A page of jobs in due order; filters by status and due range. With `tag`, the jobs of
   * the tenant carrying it, read from the tag index, in job id order (see listByTag).
   */
  async list(query: ListQuery = {}): Promise<ListPage> {
    const q = parseListQuery(query, this.clock.now());
    if (q.filter.tag !== undefined) return listByTag(this.store, q, this.options.defaultTenant);
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
   * carries it); `not-found`. A series' pending occurrence is skipped: its series goes on
   * from the occurrence after it (deleteSchedule ends a series).
   */
  async cancel(id: string, opts: { tenant?: string } = {}): Promise<CancelResult> {
    if (typeof id !== "string") throw new InvalidJobError("id", "a job id string", id);
    const r = await this.store.jobCancel({ id, now: this.clock.now(), ...opts });
    if (r.outcome === "cancelled") {
      this.events.changed("cancelled", r.job);
      // a series' pending occurrence: the store wrote the one after it (store.ts jobCancel)
      if (r.job.scheduleId !== null) this.engine.wakeFor(this.clock.now());
    }
    return r;
  }

  /** Counts by state, the pending histogram by bucket, lateness and in-flight work. */
  async stats(opts: { tenant?: string; buckets?: number } = {}): Promise<SchedulerStats> {
    const width = this.store.bucketWidthMs;
    // Overdue buckets still holding work are included: they are the catch-up backlog.
    const to = bucketOf(this.clock.now(), width) + width * (opts.buckets ?? 48);
    const tenant = opts.tenant === undefined ? {} : { tenant: opts.tenant };
    const [counts, buckets, pausedJobs, pauses] = await Promise.all([
      this.store.jobsCountByStatus(tenant),
      this.store.bucketsCounts({ from: 0, to, ...tenant }),
      this.pauses.pausedJobs(tenant),
      this.store.pauses ? this.pauses.list({ ...tenant, states: ["active"] }) : [],
    ]);
    return {
      counts,
      buckets,
      paused: { jobs: pausedJobs, activePauses: pauses.length },
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

  /**
   * The durable change feed: every transition of every job (of `tenant`, or all), from every
   * process sharing the store, oldest first, after the cursor `after`. Resume with the page's
   * `next`; a change is kept for `changeRetentionMs`. Throws InvalidJobError for a bad cursor
   * or limit, ChangeCursorExpiredError for a cursor older than what is kept.
   */
  changes(query: ChangesQuery = {}): Promise<ChangesPage> {
    return readChangesPage(this.store, query);
  }

  /** The cursor after every change readable now: where a live view of the feed starts. */
  changesHead(opts: { tenant?: string } = {}): Promise<string> {
    return this.store.changesHead(opts.tenant === undefined ? {} : { tenant: opts.tenant });
  }

  /** Runs the change feed's retention now; resolves to the number of changes removed. */
  purgeChanges(): Promise<number> {
    return this.engine.purgeChanges();
  }

  /** Runs retention now; resolves to the number of jobs removed. */
  purgeHistory(): Promise<number> {
    return this.engine.purgeHistory();
  }

  /** Resolves when nothing claimed by this process is still waiting or running. */
  idle(): Promise<void> {
    return this.engine.idle();
  }
}
