import { resolve } from "node:path";
import type Database from "better-sqlite3";
import type { ChangePosition, ChangesPage } from "../../core/change.js";
import type { Job, JobStatus, NewJob } from "../../core/job.js";
import { JOB_STATUSES } from "../../core/job.js";
import { InvalidOptionError, StorageFullError } from "../../core/errors.js";
import type {
  BucketCount,
  CancelResult,
  ClaimParams,
  InsertResult,
  ScheduleChangeResult,
  ScheduleDeleteParams,
  ScheduleReplaceParams,
  SchedulesListParams,
  JobsListParams,
  LeaseExpiryResult,
  OperationsListParams,
  NextDue,
  RescheduleParams,
  RescheduleResult,
  Settlement,
  StaleLeasesParams,
  StageResult,
  Store,
  TagListParams,
  TagPage,
  TagQuery,
} from "../../store/store.js";
import { checkJobTags, tagsFromColumn } from "../../core/tags.js";
import { countByTag, listByTag, tagsDrop } from "./tags.js";
import { Ballast, freeBytes } from "./ballast.js";
import { cancelJob, moveJob } from "./changes.js";
import { headCursor, purgeChanges, readChanges } from "./feed.js";
import { claimDue, type TenantCursor } from "./claim.js";
import { Checkpointer } from "./checkpointer.js";
import { migrate, openDatabase } from "./connection.js";
import { SqliteContext, type Statements } from "./context.js";
import { insertJobs } from "./insert.js";
import { listJobs } from "./list.js";
import { CounterDeltas, rowToJob, type JobTuple } from "./rows.js";
import { expireLeases, releaseStale, settleJobs } from "./settle.js";
import { stageBuckets } from "./staging.js";
import { SqlitePauseStore } from "./pauses.js";
import type { PauseStore } from "../../store/pause-store.js";
import {
  deleteSchedule,
  getSchedule,
  insertSchedule,
  listSchedules,
  replaceSchedule,
  skipCancelled,
} from "./series.js";
import type { Schedule } from "../../core/series.js";
import type { Operation, OperationStepResult } from "../../core/operation.js";
import {
  cancelOperation,
  getOperation,
  insertOperation,
  listOperations,
  stepOperation,
} from "./operations.js";
import { rowToSchedule, type ScheduleRow } from "../../store/schedule-row.js";
import { RAW_JOB_STATEMENTS, SQL } from "./statements.js";

/** Longest an operation batch waits for a WAL drain in one call (operationStep), in ms. */
const HOLD_WAIT_MS = 50;

/** Free bytes beside the file that storageProbe takes as "space is back": 1 MiB. */
const STORAGE_PROBE_MIN_FREE = 1 << 20;
/**
 * No ballast unless asked: it costs its size in disk space and a write of it on the first
 * open of each file, which suits a server (serve keeps 16 MiB) more than every embedding.
 */
const DEFAULT_BALLAST_BYTES = 0;

/** Options of the SQLite store. */
export interface SqliteStoreOptions {
  /** Database file path, or ":memory:". Required. */
  readonly path: string;
  /**
   * Bucket width in ms, fixed when the file is created (a later open with another width is
   * refused). Default: the file's own width, or 3,600,000 (one hour) for a new file.
   */
  readonly bucketWidthMs?: number;
  /** Shard count, fixed when the file is created. Default: the file's own, or 1 (one node). */
  readonly shardCount?: number;
  /** SQLite page cache in MiB. Default 64. */
  readonly cacheMiB?: number;
  /** How long a writer waits for another process's lock, in ms. Default 5000. */
  readonly busyTimeoutMs?: number;
  /**
   * Run WAL checkpoints on a worker thread instead of inside whichever commit crosses the
   * threshold (see checkpointer.ts). Default true for files, false for ":memory:".
   */
  readonly backgroundCheckpoints?: boolean;
  /**
   * Bytes of the emergency reserve kept beside the file (`<path>.ballast`, see ballast.ts):
   * released when the disk fills up, so due jobs keep firing and their outcomes are recorded
   * while new jobs are refused; written back once that much is free again. Default 0 (none);
   * `duetime serve` keeps 16 MiB (tens of thousands of outcomes). Ignored for ":memory:".
   */
  readonly ballastBytes?: number;
}

/**
 * The embedded store: one SQLite file in WAL mode, fired by one process at a time (other
 * processes, such as the CLI, may read and write it). better-sqlite3 is synchronous; each
 * method is one short transaction bounded by its `limit`, so the event loop is never held
 * for long. The operations live beside this file, one module per concern: insert, staging,
 * settle, changes (cancel/reschedule/retry), list.
 */
export class SqliteStore implements Store {
  readonly kind = "sqlite";
  /** No node services, clock or notifications; a free-space probe of the file's filesystem. */
  readonly capabilities = Object.freeze({
    nodeStart: false,
    clockRead: false,
    storageProbe: true,
    onEarlierDue: false,
    pauses: true,
  });
  readonly bucketWidthMs: number;
  readonly shardCount: number;
  readonly location: string;
  private readonly db: Database.Database;
  private readonly s: Statements;
  private readonly ctx: SqliteContext;
  private readonly checkpointer: Checkpointer | null;
  private readonly path: string;
  private readonly ballast: Ballast | null;
  /** Pauses (pauses.ts): held jobs stay out of the hot index. */
  readonly pauses: PauseStore;
  /** Where the last claim shared out per tenant stopped (claim.ts). */
  private readonly tenantCursor: TenantCursor = { after: "" };

  constructor(options: SqliteStoreOptions) {
    if (typeof options.path !== "string" || options.path === "") {
      throw new InvalidOptionError("path", "a file path or :memory:", options.path);
    }
    const width = options.bucketWidthMs;
    if (width !== undefined && (!Number.isInteger(width) || width < 1000)) {
      throw new InvalidOptionError("bucketWidthMs", "an integer of at least 1000", width);
    }
    const shards = options.shardCount;
    if (shards !== undefined && (!Number.isInteger(shards) || shards < 1 || shards > 4096)) {
      throw new InvalidOptionError("shardCount", "an integer from 1 to 4096", shards);
    }
    const bg = options.backgroundCheckpoints;
    if (bg !== undefined && typeof bg !== "boolean") {
      throw new InvalidOptionError("backgroundCheckpoints", "true or false", bg);
    }
    const ballastBytes = options.ballastBytes ?? DEFAULT_BALLAST_BYTES;
    if (!Number.isInteger(ballastBytes) || ballastBytes < 0 || ballastBytes > 2 ** 40) {
      throw new InvalidOptionError(
        "ballastBytes",
        "an integer of bytes from 0 to 2^40",
        ballastBytes,
      );
    }
    const background = bg ?? options.path !== ":memory:";
    this.path = options.path;
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const opened = openDatabase({
      path: options.path,
      bucketWidthMs: width,
      shardCount: shards,
      cacheMiB: options.cacheMiB ?? 64,
      busyTimeoutMs,
      checkpointElsewhere: background,
    });
    // The RESTART step makes writers wait: keep it well inside their busy timeout.
    this.checkpointer = background
      ? new Checkpointer(options.path, {
          restartWaitMs: Math.min(100, Math.floor(busyTimeoutMs / 4)),
        })
      : null;
    this.location = options.path === ":memory:" ? ":memory:" : resolve(options.path);
    this.db = opened.db;
    this.bucketWidthMs = opened.bucketWidthMs;
    this.shardCount = opened.shardCount;
    const prepared = {} as Statements;
    for (const [name, sql] of Object.entries(SQL)) {
      prepared[name as keyof typeof SQL] = this.db.prepare(sql);
    }
    for (const name of RAW_JOB_STATEMENTS) prepared[name].raw(true);
    this.s = prepared;
    this.ballast =
      options.path === ":memory:" || ballastBytes === 0
        ? null
        : new Ballast(`${this.location}.ballast`, ballastBytes);
    this.ballast?.ensure();
    this.ctx = new SqliteContext(
      this.db,
      prepared,
      this.bucketWidthMs,
      this.shardCount,
      this.ballast,
    );
    this.pauses = new SqlitePauseStore(this.ctx);
  }

  /** The underlying connection, for store-specific tests and benchmarks only. */
  get connection(): Database.Database {
    return this.db;
  }

  async migrate(): Promise<void> {
    migrate(this.db);
  }

  async close(): Promise<void> {
    await this.checkpointer?.stop();
    if (this.db.open) this.db.close();
  }

  async jobsInsert(params: { jobs: readonly NewJob[]; now: number }): Promise<InsertResult[]> {
    // While the ballast is released the space is kept for firing: creates are refused.
    this.ballast?.refuseWhileShort("inserting jobs");
    checkJobTags(params.jobs);
    return this.ctx.write(
      "inserting jobs",
      () => insertJobs(this.ctx, params.jobs, params.now),
      true,
    );
  }

  async jobGet(params: { id: string; tenant?: string }): Promise<Job | null> {
    return this.ctx.ownedRow(params.id, params.tenant)?.job ?? null;
  }

  async jobGetByKey(params: { tenant: string; key: string }): Promise<Job | null> {
    const row = this.s.jobByLiveKey.get(params.tenant, params.key) as JobTuple | undefined;
    return row ? rowToJob(row) : null;
  }

  async jobsList(params: JobsListParams): Promise<Job[]> {
    return listJobs(this.s, this.bucketWidthMs, params);
  }

  async jobsListByTag(params: TagListParams): Promise<TagPage> {
    return listByTag(this.s, params);
  }

  async jobsCountByTag(params: TagQuery): Promise<number> {
    return countByTag(this.s, params);
  }

  async bucketsStage(params: { until: number; maxRows: number }): Promise<StageResult> {
    return stageBuckets(this.ctx, params.until, params.maxRows);
  }

  /** One write transaction: see claim.ts (the due prefix, or shared out per tenant). */
  async jobsClaimDue(params: ClaimParams): Promise<Job[]> {
    return this.ctx.write("claiming jobs", () => claimDue(this.ctx, params, this.tenantCursor));
  }

  async jobsSettle(params: {
    now: number;
    settlements: readonly Settlement[];
  }): Promise<boolean[]> {
    return this.ctx.write("settling jobs", () =>
      settleJobs(this.ctx, params.settlements, params.now),
    );
  }

  async jobCancel(params: { id: string; tenant?: string; now: number }): Promise<CancelResult> {
    return this.ctx.write("cancelling a job", () => {
      const r = cancelJob(this.ctx, params);
      if (r.outcome === "cancelled") {
        skipCancelled(this.ctx, r.job, params.now, () => this.ctx.newId(params.now));
      }
      return r;
    });
  }

  async jobReschedule(params: RescheduleParams): Promise<RescheduleResult> {
    return this.ctx.write("rescheduling a job", () => moveJob(this.ctx, params, "pending"));
  }

  async jobRetry(params: RescheduleParams): Promise<RescheduleResult> {
    return this.ctx.write("retrying a job", () => moveJob(this.ctx, params, "dead"));
  }

  async leasesExpire(params: { now: number; limit: number }): Promise<LeaseExpiryResult> {
    return this.ctx.write("expiring leases", () =>
      expireLeases(this.ctx, params.now, params.limit),
    );
  }

  /**
   * Whether storage takes writes again, from the free space of the file's filesystem: at
   * least STORAGE_PROBE_MIN_FREE bytes, and, after the ballast was released, room to write
   * it back (which this does, ending the refusal of creates). A small test write would prove
   * nothing: SQLite commits small transactions into free pages and the WAL's reused space
   * on a disk that refuses a larger one.
   */
  async storageProbe(_params: { now: number }): Promise<void> {
    if (this.path === ":memory:") return;
    this.ballast?.refuseWhileShort("probing storage");
    const free = freeBytes(this.path);
    if (free < STORAGE_PROBE_MIN_FREE) {
      throw new StorageFullError(
        `probing storage (${Math.floor(free / 1024)} KiB free beside the database file, ${STORAGE_PROBE_MIN_FREE / 1024} KiB wanted)`,
      );
    }
  }

  async leasesRenew(params: { owner: string; now: number; leaseMs: number }): Promise<number> {
    return this.ctx.write(
      "renewing leases",
      () =>
        this.s.leasesRenew.run({ owner: params.owner, leaseUntil: params.now + params.leaseMs })
          .changes,
    );
  }

  async leasesReleaseStale(params: StaleLeasesParams): Promise<number> {
    if (params.limit <= 0) return 0;
    return this.ctx.write("releasing stale claims", () => releaseStale(this.ctx, params));
  }

  /**
   * Staging is not sharded (a bucket is staged for every shard at once), so the next bucket
   * to stage is the same whatever `shards` says; the earliest due time is of those shards.
   */
  async jobsNextDue(params: { now: number; shards?: readonly number[] }): Promise<NextDue> {
    const inShards = this.ctx.shardsFilter(params.shards);
    const hot =
      inShards === null
        ? (this.s.hotEarliest.get() as { due_at: number | null })
        : (this.s.hotEarliestOfShards.get({ shards: inShards }) as { due_at: number } | undefined);
    const unstaged = this.s.nextUnstagedBucket.get() as { bucket: number | null };
    return { earliestDue: hot?.due_at ?? null, nextUnstagedBucket: unstaged.bucket };
  }

  async bucketsCounts(params: {
    from: number;
    to: number;
    tenant?: string;
  }): Promise<BucketCount[]> {
    const rows = (
      params.tenant === undefined
        ? this.s.bucketCountsRange.all(params.from, params.to)
        : this.s.bucketCountsRangeTenant.all(params.from, params.to, params.tenant)
    ) as { bucket: number; pending: number }[];
    return rows.filter((r) => r.pending > 0).map((r) => ({ bucket: r.bucket, pending: r.pending }));
  }

  async jobsCountByStatus(params: { tenant?: string }): Promise<Record<JobStatus, number>> {
    const rows = (
      params.tenant === undefined
        ? this.s.statusCounts.all()
        : this.s.statusCountsTenant.all(params.tenant)
    ) as { status: JobStatus; n: number }[];
    const out = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    for (const r of rows) out[r.status] = r.n;
    return out;
  }

  async schedulesInsert(params: {
    schedule: Schedule;
    job: NewJob | null;
    now: number;
  }): Promise<{ schedule: Schedule; created: boolean }> {
    this.ballast?.refuseWhileShort("inserting a schedule");
    return this.ctx.write(
      "inserting a schedule",
      () => insertSchedule(this.ctx, params.schedule, params.job, params.now),
      true,
    );
  }

  async scheduleGet(params: { id: string; tenant?: string }): Promise<Schedule | null> {
    return getSchedule(this.ctx, params.id, params.tenant);
  }

  async scheduleGetByKey(params: { tenant: string; key: string }): Promise<Schedule | null> {
    const row = this.s.scheduleByKey.get(params.tenant, params.key) as ScheduleRow | undefined;
    return row ? rowToSchedule(row) : null;
  }

  async schedulesList(params: SchedulesListParams): Promise<Schedule[]> {
    return listSchedules(this.ctx, params);
  }

  async scheduleReplace(params: ScheduleReplaceParams): Promise<ScheduleChangeResult> {
    return this.ctx.write("changing a schedule", () => replaceSchedule(this.ctx, params));
  }

  async scheduleDelete(params: ScheduleDeleteParams): Promise<ScheduleChangeResult> {
    return this.ctx.write("deleting a schedule", () => deleteSchedule(this.ctx, params));
  }

  async operationsInsert(params: {
    operation: Operation;
  }): Promise<{ operation: Operation; created: boolean }> {
    return this.ctx.write("inserting an operation", () =>
      insertOperation(this.ctx, params.operation),
    );
  }

  async operationGet(params: { id: string; tenant?: string }): Promise<Operation | null> {
    return getOperation(this.ctx, params.id, params.tenant);
  }

  async operationsList(params: OperationsListParams): Promise<Operation[]> {
    return listOperations(this.ctx, params);
  }

  async operationCancel(params: {
    id: string;
    tenant?: string;
    now: number;
  }): Promise<Operation | null> {
    return this.ctx.write("cancelling an operation", () => cancelOperation(this.ctx, params));
  }

  /** One write transaction: the batch's changes and the record's progress (operations.ts). */
  async operationStep(params: {
    id: string;
    now: number;
    limit: number;
  }): Promise<OperationStepResult | null> {
    // A bulk batch writes hundreds of WAL pages; while the checkpointer drains a large WAL
    // (checkpointer.ts) the batch waits, off the event loop, and comes back having done
    // nothing (scanned 0: the runner keeps its cost estimate and calls again). It waits at
    // most HOLD_WAIT_MS a call, so a runner being stopped is not kept for a whole hold.
    const hold = this.checkpointer?.walHold(HOLD_WAIT_MS);
    if (hold) {
      await hold;
      const operation = getOperation(this.ctx, params.id);
      return operation === null ? null : { operation, scanned: 0 };
    }
    return this.ctx.write("running an operation batch", () => stepOperation(this.ctx, params));
  }

  /**
   * See feed.ts: the head is read first and bounds the page; every change at or below a
   * committed head is committed already, so no read transaction is needed.
   */
  async changesRead(params: {
    tenant?: string;
    after?: ChangePosition;
    limit: number;
  }): Promise<ChangesPage> {
    return readChanges(this.s, params);
  }

  async changesHead(_params: { tenant?: string }): Promise<string> {
    return headCursor(this.s);
  }

  async changesPurge(params: { before: number; limit: number }): Promise<number> {
    return this.ctx.write("purging changes", () =>
      purgeChanges(this.s, params.before, params.limit),
    );
  }

  /**
   * Deletes the oldest finished jobs, outcome, row, key and tag entries together. Finish order is the
   * rowid of `finished`; a pass stops at the first job finished at or after `before` (one
   * finished out of order by another process's clock waits for the next pass).
   */
  async historyPurge(params: { before: number; limit: number }): Promise<number> {
    return this.ctx.write("purging history", () => {
      const oldest = this.s.historyOldest.all(params.limit) as {
        rid: number;
        seq: number;
        tenant: string;
        status: JobStatus;
        finished_at: number;
        key: string | null;
        id: string;
        tags: string | null;
      }[];
      const stop = oldest.findIndex((r) => r.finished_at >= params.before);
      const rows = stop === -1 ? oldest : oldest.slice(0, stop);
      const deltas = new CounterDeltas();
      for (const r of rows) {
        this.s.finishedDelete.run(r.rid);
        this.s.jobDeleteBySeq.run(r.seq);
        if (r.key !== null) this.s.liveKeyDelete.run(r.tenant, r.key, r.seq);
        tagsDrop(this.s, { tenant: r.tenant, id: r.id, tags: tagsFromColumn(r.tags) });
        deltas.status(r.tenant, r.status, -1);
      }
      this.ctx.flush(deltas);
      return rows.length;
    });
  }
}
