import type { ChangePosition, ChangesPage } from "../core/change.js";
import type { Job, JobStatus, JsonValue, NewJob } from "../core/job.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { LoopGroup } from "../core/loop.js";
import type { Operation, OperationState, OperationStepResult } from "../core/operation.js";
import type { Schedule, ScheduleState } from "../core/series.js";
import type { PauseStore } from "./pause-store.js";

/**
 * The store contract: scheduler operations, not SQL. Every store (SQLite, PostgreSQL)
 * implements it and passes `describeStoreContract`. Times are epoch ms and `now` is always
 * a parameter: the engine owns the clock. Every method resolves to plain rows; no
 * connection type leaks out.
 */
export interface Store {
  /** "sqlite" or "postgres". */
  readonly kind: string;
  /** Bucket width in ms this store was created with (fixed for its life). */
  readonly bucketWidthMs: number;
  /** Number of shards job ids hash into (fixed for the store's life). */
  readonly shardCount: number;
  /**
   * Where the data lives, without credentials (an absolute file path; host, database and
   * schema): the scheduler's default node name is derived from it.
   */
  readonly location: string;
  /**
   * Which optional members this store implements: each is present exactly when declared
   * true here, and the contract suite runs its cases where declared (and checks that an
   * undeclared one is absent), as River's driver suite does with `SupportsListener()`.
   */
  readonly capabilities: StoreCapabilities;

  /** Applies pending migrations; idempotent. */
  migrate(): Promise<void>;
  /** Releases connections and files. */
  close(): Promise<void>;

  /**
   * Stores jobs in one transaction: all or nothing. A job whose (tenant, key) matches a live
   * job is not stored; by its `keyMode` the holder comes back as it is (`keep`: outcome
   * `existing`), or, while pending, takes the job's due time, payload, target, options and tags
   * (`replace`, `debounce`: outcome `replaced`, due time from replacementDueAt); a claimed
   * holder is left as it is (`too-late`). A key repeated within one call: the first
   * occurrence wins and the later ones answer its job (`existing`). Concurrent replacements of
   * one key apply one after the other. Results are in input order.
   */
  jobsInsert(params: { jobs: readonly NewJob[]; now: number }): Promise<InsertResult[]>;

  /** One job by id, or null. With `tenant`, a job of another tenant is null too. */
  jobGet(params: { id: string; tenant?: string }): Promise<Job | null>;

  /** The live job with this idempotency key, or null. */
  jobGetByKey(params: { tenant: string; key: string }): Promise<Job | null>;

  /**
   * Jobs ordered by (dueAt, id), after the cursor position, filtered by status and due range
   * (`dueFrom` inclusive, `dueTo` exclusive). Reads only the buckets of the range.
   */
  jobsList(params: JobsListParams): Promise<Job[]>;

  /**
   * One tenant's jobs carrying `tag`, read from the tag index (tenant, tag, job id) in job id
   * order (creation order) after `afterId`: at most `limit` index entries are read, and the
   * jobs among them that match `statuses` and the due range come back, with the cursor to go
   * on from. Each call costs its `limit` entries whatever the backlog; walking a tag to its
   * end costs the jobs carrying it. A page may hold fewer jobs than `limit` (entries that do
   * not match) and still have a `next`. See TagPage.
   */
  jobsListByTag(params: TagListParams): Promise<TagPage>;

  /**
   * How many of one tenant's jobs carrying `tag` match `statuses` and the due range: a walk
   * of the tag's index entries (cost tracks the jobs carrying the tag, not the backlog).
   */
  jobsCountByTag(params: TagQuery): Promise<number>;

  /**
   * Moves pending jobs of buckets starting at or before `until` into the hot due-time index
   * (stores that index every pending job by due time do nothing). Oldest bucket first, at
   * most `maxRows` rows per call, so a large catch-up is done in bounded steps.
   */
  bucketsStage(params: { until: number; maxRows: number }): Promise<StageResult>;

  /**
   * Claims up to `limit` pending jobs due at or before `dueBefore`, oldest first: a
   * conditional change from pending to claimed that sets the lease (`owner`, `now + leaseMs`)
   * and bumps the fencing token and attempts. Jobs are returned in due order. A claimed job
   * that is its series' pending occurrence advances the series in the same transaction
   * (advanceSeries: the next occurrence's job is inserted and the series record updated).
   */
  jobsClaimDue(params: ClaimParams): Promise<Job[]>;

  /**
   * Records the outcome of claimed jobs in one transaction. Each settlement applies only if
   * the job is still claimed with the same fencing token; the result says which applied.
   */
  jobsSettle(params: { now: number; settlements: readonly Settlement[] }): Promise<boolean[]>;

  /**
   * Cancels a pending job: `cancelled`, `too-late` (claimed or finished) or `not-found`. A
   * job that is its series' pending occurrence is skipped: in the same transaction the
   * series moves to the occurrence after it (core/series.ts skipOccurrence), so the series
   * goes on; deleting the series is how to end it.
   */
  jobCancel(params: { id: string; tenant?: string; now: number }): Promise<CancelResult>;

  /**
   * Moves a pending job to a new due time. With `expectedVersion`, applies only if the job
   * is still at that version.
   */
  jobReschedule(params: RescheduleParams): Promise<RescheduleResult>;

  /** Puts a dead job back to pending with a fresh attempt budget, due at `dueAt`. */
  jobRetry(params: RescheduleParams): Promise<RescheduleResult>;

  /**
   * Claimed jobs whose lease ran out before `now`: back to pending (same due time), or dead
   * when no attempts are left. At most `limit` per call. Stores that announce earlier due
   * times (PostgreSQL) announce the requeued jobs, so whichever node owns them wakes.
   * Also answers the earliest lease left running, read with the sweep.
   */
  leasesExpire(params: { now: number; limit: number }): Promise<LeaseExpiryResult>;

  /**
   * The lease heartbeat: extends the lease of every job claimed by `owner` to
   * `now + leaseMs`, in one statement. Resolves to the number of claims renewed.
   */
  leasesRenew(params: { owner: string; now: number; leaseMs: number }): Promise<number>;

  /**
   * Gives back claims of an earlier incarnation of this node (lease owners starting with
   * `ownerPrefix`, other than `exceptOwner`) whose lease expires at or before `expiresBy`,
   * i.e. whose renewals have stopped: pending again at their due time, the attempt not
   * counted, like a released claim. At most `limit` per call. Resolves to the number given
   * back; stores that announce earlier due times (PostgreSQL) announce these too.
   */
  leasesReleaseStale(params: StaleLeasesParams): Promise<number>;

  /**
   * What the watcher needs to decide how long to sleep: the earliest due time in the hot
   * index (or among all pending jobs, for stores without staging) and the start of the
   * earliest bucket that still waits to be staged.
   */
  jobsNextDue(params: { now: number; shards?: readonly number[] }): Promise<NextDue>;

  /** Pending jobs per bucket in [from, to), from counters kept at write time (no row counting). */
  bucketsCounts(params: { from: number; to: number; tenant?: string }): Promise<BucketCount[]>;

  /** Jobs per status. */
  jobsCountByStatus(params: { tenant?: string }): Promise<Record<JobStatus, number>>;

  /**
   * Stores a series and its first occurrence's job in one transaction. A series of the same
   * tenant holding `schedule.key` is not stored: it comes back with `created: false`.
   */
  schedulesInsert(params: {
    schedule: Schedule;
    job: NewJob | null;
    now: number;
  }): Promise<{ schedule: Schedule; created: boolean }>;

  /** One series by id, or null. With `tenant`, a series of another tenant is null too. */
  scheduleGet(params: { id: string; tenant?: string }): Promise<Schedule | null>;

  /** The series holding an idempotency key, or null. */
  scheduleGetByKey(params: { tenant: string; key: string }): Promise<Schedule | null>;

  /** Series in id order (creation order) after `afterId`, filtered by tenant and state. */
  schedulesList(params: SchedulesListParams): Promise<Schedule[]>;

  /**
   * Replaces a series' record and its pending occurrence in one transaction: the job its
   * stored record names (`nextJobId`) is cancelled if still pending and `job` (if any) is
   * inserted. Applies only while the stored record is at `expectedVersion` (when given) and
   * still names `expectedNextJobId` as its pending occurrence (a claim may have advanced it
   * since the caller read it: `moved`, read again and recompute).
   */
  scheduleReplace(params: ScheduleReplaceParams): Promise<ScheduleChangeResult>;

  /** Deletes a series, cancelling its pending occurrence, in one transaction. */
  scheduleDelete(params: ScheduleDeleteParams): Promise<ScheduleChangeResult>;

  /**
   * Stores a new operation record (queued; see src/core/operation.ts). An operation of the
   * same tenant holding `operation.key` is not stored: it comes back with `created: false`.
   */
  operationsInsert(params: {
    operation: Operation;
  }): Promise<{ operation: Operation; created: boolean }>;

  /** One operation record by id, or null. With `tenant`, another tenant's is null too. */
  operationGet(params: { id: string; tenant?: string }): Promise<Operation | null>;

  /** Operation records, newest first, before `beforeId`, filtered by tenant and states. */
  operationsList(params: OperationsListParams): Promise<Operation[]>;

  /**
   * Cancels an operation that is queued or running: a batch in flight commits first (the
   * record is written under the same lock), no batch starts after. Others come back as
   * they are; null when not found.
   */
  operationCancel(params: { id: string; tenant?: string; now: number }): Promise<Operation | null>;

  /**
   * One batch of an active operation, in one transaction: reads up to `limit` of its
   * tenant's jobs after its cursor, acts on those matching its filter that its kind acts on
   * (the same transitions, change-feed rows and counters as the single-job calls), and
   * writes the record's counts and cursor, so a crash either keeps the whole batch or none of
   * it. A batch that read fewer than `limit` jobs ends the operation (`done`). An operation
   * no longer active comes back as it is with `scanned: 0`; null when not found. An active
   * one may come back as it is with `scanned: 0` too, when the store waited for its storage
   * instead of writing (SQLite while it drains its WAL, checkpointer.ts): call again.
   */
  operationStep(params: {
    id: string;
    now: number;
    limit: number;
  }): Promise<OperationStepResult | null>;

  /** Deletes finished jobs that finished before `before`, at most `limit` per call. */
  historyPurge(params: { before: number; limit: number }): Promise<number>;

  /**
   * The change feed: what happened to jobs (of `tenant`, or of all), oldest first, strictly
   * after `after` (from the oldest kept when absent), at most `limit`. Every write above
   * records its changes in its own transaction, so the feed holds exactly the transitions that
   * committed, from every writer. A reader never steps over a change that commits later
   * (see ChangePosition). Throws ChangeCursorExpiredError when changes after `after` were
   * already removed by `changesPurge`.
   */
  changesRead(params: {
    tenant?: string;
    after?: ChangePosition;
    limit: number;
  }): Promise<ChangesPage>;

  /** The cursor of the latest change readable now (of `tenant`, or of all): where a live view starts. */
  changesHead(params: { tenant?: string }): Promise<string>;

  /**
   * Deletes the oldest changes made before `before`, at most `limit` per call (oldest first),
   * and remembers how far it went, so a cursor older than that is told (ChangeCursorExpiredError).
   */
  changesPurge(params: { before: number; limit: number }): Promise<number>;

  /**
   * Optional: starts what a firing node of this store needs beside the engine (PostgreSQL:
   * shard leases and partition maintenance). The scheduler calls it on `start()` and stops
   * the result on `stop()`; it claims only the shards `shards()` returns.
   */
  nodeStart?(params: NodeStartParams): Promise<NodeServices>;

  /**
   * Optional: the store's own current time, epoch ms (PostgreSQL: `clock_timestamp()`), for a
   * store shared by nodes whose clocks must agree. The engine compares it with its clock at
   * start and periodically and warns on skew.
   */
  clockRead?(): Promise<number>;

  /**
   * Optional: after a StorageFullError, whether storage takes writes again, learnt without
   * waiting for the next job write (SQLite: the free space of the file's filesystem). Resolves
   * when it does; throws StorageFullError while it does not.
   */
  storageProbe?(params: { now: number }): Promise<void>;

  /**
   * Optional: calls `listener` when another writer schedules a job that may be due earlier
   * than what this process knows about (PostgreSQL LISTEN/NOTIFY). Returns an unsubscribe.
   * `loop` is what the store's listening runs on (reconnect backoff, its log), the
   * engine's clock and logger; without it, the system clock and the store's own reporting.
   */
  onEarlierDue?(listener: (dueAt: number) => void, loop?: EarlierDueLoop): () => void;

  /**
   * Optional: pauses by tenant, target or tag (issue 13 §4, pause-store.ts), whose jobs are
   * held out of the due-time index while paused. Declared by the stores that implement it.
   */
  readonly pauses?: PauseStore;
}

export interface OperationsListParams {
  readonly tenant?: string;
  readonly states?: readonly OperationState[];
  /** Start strictly before this id (ids grow with creation time: newest first). */
  readonly beforeId?: string;
  readonly limit: number;
}

export interface SchedulesListParams {
  readonly tenant?: string;
  readonly state?: ScheduleState;
  /** Start strictly after this id. */
  readonly afterId?: string;
  readonly limit: number;
}

export interface ScheduleReplaceParams {
  readonly id: string;
  readonly tenant?: string;
  readonly expectedVersion?: number;
  /** The pending occurrence the caller saw (null: none). */
  readonly expectedNextJobId: string | null;
  /** The whole new record (its `nextJobId` is `job`'s id, or null). */
  readonly schedule: Schedule;
  /** The new pending occurrence, or null (paused, ended). */
  readonly job: NewJob | null;
  readonly now: number;
}

export interface ScheduleDeleteParams {
  readonly id: string;
  readonly tenant?: string;
  readonly expectedVersion?: number;
  readonly now: number;
}

export type ScheduleChangeResult =
  | { readonly outcome: "changed" | "deleted"; readonly schedule: Schedule }
  | { readonly outcome: "version-conflict" | "moved"; readonly schedule: Schedule }
  | { readonly outcome: "not-found" };

/** The engine's clock and logger, for a store's listening loop (see onEarlierDue). */
export interface EarlierDueLoop {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The engine's loops, which the listening loop joins (they recover together). */
  readonly loops?: LoopGroup;
}

/** The optional members of `Store`. */
export type StoreCapability =
  "nodeStart" | "clockRead" | "storageProbe" | "onEarlierDue" | "pauses";

/** Every optional member, declared supported (true) or not, by each store. */
export type StoreCapabilities = Readonly<Record<StoreCapability, boolean>>;

export interface NodeStartParams {
  /** This node's id (the lease owner name of its claims). */
  readonly nodeId: string;
  /**
   * The engine's clock: the services' loops run on its timers and read its time (lease
   * expiries), so a ManualClock drives them as it drives the engine.
   */
  readonly clock: Clock;
  /** Where the services' loops log a failed pass (they carry on, with backoff). */
  readonly logger: Logger;
  /** Called when the set of shards this node may claim changes. */
  readonly onShardsChange: () => void;
  /** The engine's loops, which the services' loops join (they recover together). */
  readonly loops?: LoopGroup;
  /**
   * Called when another node was found dead and the leases of its claims ended, so the
   * lease sweeper can put them back at once instead of at its next planned sweep.
   */
  readonly onPeerLost?: () => void;
}

export interface NodeServices {
  /** Shards this node may claim now; undefined means all. */
  shards(): readonly number[] | undefined;
  /** Stops the services (releasing what they hold, such as shard leases). */
  stop(): Promise<void>;
}

export interface InsertResult {
  readonly job: Job;
  /** True only for `outcome: "created"`: the job was stored as a new job. */
  readonly created: boolean;
  readonly outcome: InsertOutcome;
}

/**
 * What an insert did: stored a new job (`created`); found the key's live holder and kept it
 * (`existing`); changed the pending holder (`replaced`); or found the holder claimed, so it
 * could not be replaced and nothing changed (`too-late`, the holder comes back).
 */
export type InsertOutcome = "created" | "existing" | "replaced" | "too-late";

export interface JobsListParams {
  readonly tenant?: string;
  readonly statuses?: readonly JobStatus[];
  /** Inclusive lower bound on dueAt. */
  readonly dueFrom?: number;
  /** Exclusive upper bound on dueAt. */
  readonly dueTo?: number;
  /** Start strictly after this (dueAt, id) position. */
  readonly after?: { readonly dueAt: number; readonly id: string };
  readonly limit: number;
}

/** Which jobs of a tag: one tenant, one tag, optionally by status and due range. */
export interface TagQuery {
  readonly tenant: string;
  readonly tag: string;
  /** Only jobs in these states; all states when absent. */
  readonly statuses?: readonly JobStatus[];
  /** Inclusive lower bound on dueAt. */
  readonly dueFrom?: number;
  /** Exclusive upper bound on dueAt. */
  readonly dueTo?: number;
}

export interface TagListParams extends TagQuery {
  /** Start strictly after this job id (the `next` of the previous page). */
  readonly afterId?: string;
  /** Most index entries read (so most jobs returned) by this call, at least 1. */
  readonly limit: number;
}

/** A page of `jobsListByTag`. */
export interface TagPage {
  /** The matching jobs among the entries read, in id order. */
  readonly jobs: Job[];
  /**
   * The last job id read when `limit` entries were read (pass it as `afterId` to go on; the
   * next page may be empty), or null when the tag has no entries left after this page.
   */
  readonly next: string | null;
}

/** `leasesReleaseStale`: which earlier incarnation's claims to give back, and how many. */
export interface StaleLeasesParams {
  /** Lease owners starting with this (`<nodeName>/`) are this node's incarnations. */
  readonly ownerPrefix: string;
  /** The current incarnation's owner, never released. */
  readonly exceptOwner: string;
  /** Only leases expiring at or before this epoch ms (their renewals have stopped). */
  readonly expiresBy: number;
  readonly now: number;
  /** At most this many per call. */
  readonly limit: number;
}

export interface ClaimParams {
  readonly now: number;
  /** Claim jobs due at or before this instant (now + the timing wheel's horizon). */
  readonly dueBefore: number;
  readonly limit: number;
  /** Lease length in ms. */
  readonly leaseMs: number;
  /** Who holds the lease (node id). */
  readonly owner: string;
  /** Only jobs of these shards; all shards when absent. */
  readonly shards?: readonly number[];
  /**
   * Fair share across tenants. Absent: the batch is the due prefix, oldest first, whoever it
   * belongs to. Present: no tenant ends up with more than `max` claimed jobs counting the
   * ones the caller already holds, and while a tenant is near that cap the batch is shared
   * out among the tenants with due work (oldest first within each), so one tenant's due
   * backlog never keeps another's due job in the database.
   */
  readonly tenantShare?: TenantShare;
}

/** `ClaimParams.tenantShare`: the per-tenant cap on claimed work and what is held already. */
export interface TenantShare {
  /** Most claimed-and-unsettled jobs of one tenant (at least 1). */
  readonly max: number;
  /** Claimed jobs the caller holds now, by tenant (tenants not listed hold none). */
  readonly held: ReadonlyMap<string, number>;
}

/**
 * Whether a claim must share its batch out tenant by tenant: some tenant is within one batch
 * of its cap. Otherwise the plain due prefix cannot take any tenant past it, and the claim
 * stays the one range read of the due index (the poll's cost is unchanged).
 */
export function claimNeedsShare(params: ClaimParams): boolean {
  const share = params.tenantShare;
  if (!share) return false;
  if (share.max < params.limit) return true;
  for (const n of share.held.values()) if (share.max - n < params.limit) return true;
  return false;
}

/**
 * The tenants a shared claim serves, in a rotation: those after the cursor (the last tenant
 * served) in name order, then, when fewer than `limit`, those from the start up to the
 * cursor. With more tenants than fit a batch, each still gets its turn within a few claims.
 * `fromStart` is called only when the first read came back short.
 */
export function rotateTenants(
  afterCursor: readonly string[],
  cursor: string,
  limit: number,
  fromStart: () => readonly string[] | null,
): string[] {
  const out = [...afterCursor];
  if (out.length >= limit || cursor === "") return out;
  for (const t of fromStart() ?? []) {
    if (t > cursor || out.length >= limit) break;
    out.push(t);
  }
  return out;
}

/**
 * Shares a claim batch out among the tenants that may have due work, in rounds: each round
 * asks every tenant still open for an even part of what is left (at most its room under the
 * cap); a tenant that returns fewer than it was asked for has nothing more due and drops
 * out, so the next round hands its part to the others. Both stores drive their per-tenant
 * reads with it, so the rule is written once.
 */
export class BatchShare {
  private left: number;
  private open: { tenant: string; room: number }[];
  private rounds = 0;
  private readonly served = new Set<string>();

  constructor(
    private readonly order: readonly string[],
    limit: number,
    share: TenantShare,
    /** Most rounds (each is a statement per tenant, or one statement, per store). */
    private readonly maxRounds = 4,
  ) {
    this.left = limit;
    this.open = order
      .map((tenant) => ({ tenant, room: share.max - (share.held.get(tenant) ?? 0) }))
      .filter((t) => t.room > 0);
  }

  /** This round's asks (empty once the batch is full or nobody has more). */
  next(): { tenant: string; n: number }[] {
    if (this.left <= 0 || this.open.length === 0 || this.rounds >= this.maxRounds) return [];
    this.rounds++;
    const part = Math.max(1, Math.ceil(this.left / this.open.length));
    const asks: { tenant: string; n: number }[] = [];
    let budget = this.left;
    for (const t of this.open) {
      const n = Math.min(part, t.room, budget);
      if (n <= 0) break;
      asks.push({ tenant: t.tenant, n });
      budget -= n;
    }
    return asks;
  }

  /** The last tenant, in the order given, that got jobs (where the next rotation starts). */
  lastServed(): string | undefined {
    for (let i = this.order.length - 1; i >= 0; i--) {
      if (this.served.has(this.order[i]!)) return this.order[i];
    }
    return undefined;
  }

  /** What the round's asks returned, per tenant (tenants missing got nothing). */
  got(asks: readonly { tenant: string; n: number }[], counts: ReadonlyMap<string, number>): void {
    const exhausted = new Set<string>();
    const byTenant = new Map(this.open.map((o) => [o.tenant, o]));
    for (const a of asks) {
      const n = counts.get(a.tenant) ?? 0;
      this.left -= n;
      if (n > 0) this.served.add(a.tenant);
      const t = byTenant.get(a.tenant);
      if (t) t.room -= n;
      if (n < a.n) exhausted.add(a.tenant);
    }
    this.open = this.open.filter((t) => t.room > 0 && !exhausted.has(t.tenant));
  }
}

/**
 * The outcome of one claimed job. `fence` is the token of the claim being settled and
 * `firedAt` when its handler started (epoch ms). A new due time (`retryAt`) is all a
 * settlement says about where the job goes: the store places it in its bucket.
 */
export type Settlement = SettlementBase &
  (
    | { readonly outcome: "succeeded"; readonly result: JsonValue | null }
    | { readonly outcome: "dead" | "expired"; readonly error: string }
    /**
     * Hand a claim back without counting its attempt: pending again. Stopping hands back
     * unstarted claims as they were (no other field). A handler that met an infrastructure
     * failure (InfrastructureError: nothing was attempted) hands its job back due at
     * `retryAt` with `error` as its last error; give both or neither.
     */
    | {
        readonly outcome: "release";
        readonly retryAt?: number;
        readonly error?: string;
      }
    | {
        readonly outcome: "retry";
        readonly error: string;
        /** New due time (epoch ms). */
        readonly retryAt: number;
      }
  );

export interface SettlementBase {
  readonly id: string;
  readonly fence: number;
  readonly firedAt: number;
  /**
   * The callback job reporting this outcome (core/callbacks.ts callbackJob): stored in the
   * same transaction as the outcome when the settlement applies, and never when it does not,
   * so a callback exists exactly when its outcome does.
   */
  readonly callback?: NewJob;
}

export type CancelResult =
  | { readonly outcome: "cancelled"; readonly job: Job }
  | { readonly outcome: "too-late"; readonly job: Job }
  | { readonly outcome: "not-found" };

export interface RescheduleParams {
  readonly id: string;
  readonly tenant?: string;
  /** The new due time (epoch ms); the store places the job in its bucket. */
  readonly dueAt: number;
  readonly expectedVersion?: number;
  readonly now: number;
}

export type RescheduleResult =
  | { readonly outcome: "rescheduled"; readonly job: Job }
  | { readonly outcome: "too-late"; readonly job: Job }
  | { readonly outcome: "version-conflict"; readonly job: Job }
  /** retry only: another live job now holds this job's idempotency key. */
  | { readonly outcome: "key-conflict"; readonly job: Job; readonly holder: Job }
  | { readonly outcome: "not-found" };

export interface StageResult {
  /** Rows moved into the hot index by this call. */
  readonly rows: number;
  /** Buckets whose staging finished in this call. */
  readonly buckets: number;
  /** True when staging reached `until` (nothing left to stage now). */
  readonly done: boolean;
  /**
   * Start of the earliest bucket at or before `until` not yet fully staged, or null when
   * done. Claims must stay below it, or a half-staged bucket would fire out of order.
   */
  readonly unstagedFrom: number | null;
}

export interface LeaseExpiryResult {
  readonly requeued: number;
  readonly dead: number;
  /**
   * Earliest lease still running after the call (any owner's), or null when no job is
   * claimed: the lease sweeper sleeps until then.
   */
  readonly nextExpiresAt: number | null;
}

export interface NextDue {
  /** Earliest due time among staged (or all) pending jobs, or null. */
  readonly earliestDue: number | null;
  /** Start of the earliest bucket with pending jobs not yet staged, or null. */
  readonly nextUnstagedBucket: number | null;
}

export interface BucketCount {
  readonly bucket: number;
  readonly pending: number;
}

/**
 * The new due time a settlement gives its job back at, if it moves it: a retry, or a release
 * after an infrastructure failure. Null for outcomes that finish the job and for a plain
 * release (the job stays at its due time).
 */
export function settlementRetryAt(st: Settlement): number | null {
  if (st.outcome === "retry") return st.retryAt;
  if (st.outcome === "release" && st.retryAt !== undefined) return st.retryAt;
  return null;
}

/**
 * Whether an insert put a pending job at a (new) due time: created or replaced. Those are
 * the results that may wake a watcher earlier.
 */
export function insertPlaced(r: InsertResult): boolean {
  return r.outcome === "created" || r.outcome === "replaced";
}
