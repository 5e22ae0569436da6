import type pg from "pg";
import { bucketOf } from "../../core/buckets.js";
import { ChangeCursorExpiredError, InvalidJobError, StorageFullError } from "../../core/errors.js";
import type { ChangePosition, ChangesPage } from "../../core/change.js";
import { createIdGenerator, shardOf } from "../../core/ids.js";
import type { Schedule } from "../../core/series.js";
import type { Operation, OperationStepResult } from "../../core/operation.js";
import { operationStatements } from "./operation-statements.js";
import {
  cancelOperation,
  getOperation,
  insertOperation,
  listOperations,
  movedBuckets,
  readCandidates,
  stepOperation,
  type OperationDeps,
} from "./operations.js";
import { rowToSchedule, type ScheduleRow } from "../../store/schedule-row.js";
import type { Job, JobStatus, NewJob } from "../../core/job.js";
import { JOB_STATUSES, newPendingJob } from "../../core/job.js";
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
  StageResult,
  NodeServices,
  NodeStartParams,
  StaleLeasesParams,
  EarlierDueLoop,
  Store,
  TagListParams,
  TagPage,
  TagQuery,
} from "../../store/store.js";
import { insertPlaced, settlementRetryAt } from "../../store/store.js";
import { headCursor, purgeChanges, readChanges } from "./changes.js";
import { Claims } from "./claim.js";
import { connectorFor, createPool, inTransaction, withRetry } from "./connection.js";
import { DueNotifier } from "./due-notifier.js";
import { insertKeyed } from "./insert.js";
import { listJobs } from "./list.js";
import { countByTag, listByTag } from "./tags.js";
import { checkJobTags } from "../../core/tags.js";
import { expireLeasesWithCallbacks, settleWithCallbacks, type CallbackDeps } from "./callbacks.js";
import { moveOnce } from "./move.js";
import { fixedSettings, type Settings } from "./settings.js";
import { applyMigrations } from "./migrations.js";
import {
  resolvePostgresOptions,
  type PostgresStoreOptions,
  type ResolvedPostgresOptions,
} from "./options.js";
import type { PostgresContext } from "./context.js";
import { Partitions } from "./partitions.js";
import { startPostgresNode } from "./node.js";
import { insertArrays, placeJobs, rowToJob, type JobRow } from "./rows.js";
import { statements, type Statements } from "./statements.js";
import { pauseStatements, type PauseStatements } from "./pause-statements.js";
import { holdClaimedJobs, holdInserted, PostgresPauseStore, type InsertedRow } from "./pauses.js";
import {
  advanceClaimed,
  cancelAndSkip,
  deleteSchedule,
  insertSchedule,
  listSchedules,
  replaceSchedule,
  seriesStatements,
  type SeriesDeps,
} from "./series.js";

/**
 * The production store: PostgreSQL through a node-postgres pool. Pending jobs live in
 * `jobs_live`, range-partitioned by due time (one partition per bucket); claimed jobs in a
 * small `jobs_claimed`; finished jobs in `jobs_history`, partitioned by finish time. Every
 * transition is one conditional statement that moves the row between them (migrations.ts
 * and statements.ts say what each relies on). Several nodes share one database: claims use
 * FOR UPDATE SKIP LOCKED and fencing tokens, wake-ups travel by LISTEN/NOTIFY, and
 * ShardLeases splits the shards among nodes.
 */
export class PostgresStore implements Store {
  readonly kind = "postgres";
  /** Shard leases and partitions, the database's clock, LISTEN/NOTIFY, a storage probe. */
  readonly capabilities = Object.freeze({
    nodeStart: true,
    clockRead: true,
    storageProbe: true,
    onEarlierDue: true,
    pauses: true,
  });
  readonly bucketWidthMs: number;
  readonly historyWidthMs: number;
  readonly shardCount: number;
  readonly schema: string;
  readonly location: string;
  /** Partition bookkeeping, shared with PartitionMaintenance. */
  readonly partitions: Partitions;
  /**
   * The pool, statements and widths the store's background loops use (ShardLeases,
   * PartitionMaintenance take it instead of the store; so can tests and benchmarks).
   */
  readonly context: PostgresContext;
  private readonly sql: Statements;
  private readonly notifier: DueNotifier;
  private readonly claims: Claims;
  private readonly series: SeriesDeps;
  private readonly ops: OperationDeps;
  private readonly pauseSql: PauseStatements;
  /** Pauses (pauses.ts): held jobs move to jobs_held, out of every claim and poll. */
  readonly pauses: PostgresPauseStore;
  /** Ids of the occurrences a claim writes, made at the claim's `now`. */
  private idNow = 0;
  private readonly newId = createIdGenerator(() => this.idNow);
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly o: ResolvedPostgresOptions,
    settings: Settings,
  ) {
    this.schema = o.schema;
    this.location = `${o.location.display}#${o.schema}`;
    this.bucketWidthMs = settings.bucketWidthMs;
    this.historyWidthMs = settings.historyWidthMs;
    this.shardCount = settings.shardCount;
    this.sql = statements(o.schema);
    this.pauseSql = pauseStatements(o.schema);
    this.series = {
      sql: this.sql,
      series: seriesStatements(o.schema),
      pauses: this.pauseSql,
      bucketWidthMs: this.bucketWidthMs,
      shardCount: this.shardCount,
    };
    this.ops = { sql: operationStatements(o.schema), bucketWidthMs: this.bucketWidthMs };
    const advance = (client: pg.ClientBase, jobs: readonly Job[], now: number) =>
      advanceClaimed(client, this.series, jobs, now, () => {
        this.idNow = now;
        return this.newId();
      });
    this.claims = new Claims({
      pool,
      sql: this.sql,
      bucketWidthMs: this.bucketWidthMs,
      shardCount: this.shardCount,
      run: (what, fn) => this.run(what, fn),
      advance,
      hold: (client, jobs, now) => holdClaimedJobs(client, this.pauseSql, jobs, now),
    });
    this.partitions = new Partitions(
      pool,
      o.schema,
      { jobs_live: this.bucketWidthMs, jobs_history: this.historyWidthMs },
      o.ddlLockTimeoutMs,
    );
    const session = connectorFor(o.session.location, o.session.hosts);
    const sessionClient = () => new session.Client(session.config(0));
    this.notifier = new DueNotifier(sessionClient, this.sql, o.onError);
    this.pauses = new PostgresPauseStore({
      pool,
      sql: this.pauseSql,
      notifier: this.notifier,
      bucketWidthMs: this.bucketWidthMs,
      run: (what, fn) => this.run(what, fn),
      ensure: async (buckets, now) => {
        await this.ensureLive(buckets, now);
        await this.ensureHistory(now);
      },
      advance,
      notifyDue: (dueAt, now) => this.notifyRequeued(dueAt, now),
    });
    this.context = Object.freeze({
      pool,
      schema: o.schema,
      sql: this.sql,
      bucketWidthMs: this.bucketWidthMs,
      historyWidthMs: this.historyWidthMs,
      shardCount: this.shardCount,
      partitions: this.partitions,
      sessionClient,
      notifier: this.notifier,
    });
  }

  /** Connects, applies migrations (advisory-locked) and reads the schema's fixed settings. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const o = resolvePostgresOptions(options);
    // Through a transaction pooler no session option survives: statement_timeout is then
    // the role's (docs/operations-postgres.md, "Poolers").
    const pool = createPool(
      connectorFor(o.location, o.location.hosts),
      o.poolSize,
      o.location.pooler === null ? o.statementTimeoutMs : null,
      o.onError,
    );
    try {
      const client = await pool.connect();
      try {
        await applyMigrations(client, o.schema);
      } finally {
        client.release();
      }
      const settings = await fixedSettings(pool, statements(o.schema), o);
      return new PostgresStore(pool, o, settings);
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
  }

  /** The pool, for store-specific tests and benchmarks only. */
  get connection(): pg.Pool {
    return this.pool;
  }

  async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await applyMigrations(client, this.schema);
    } finally {
      client.release();
    }
  }

  /** Shard leases and partition maintenance for a firing node (see node.ts). */
  nodeStart(params: NodeStartParams): Promise<NodeServices> {
    return startPostgresNode(this.context, params, {
      shardHeartbeatMs: this.o.shardHeartbeatMs,
      maintenanceIntervalMs: this.o.maintenanceIntervalMs,
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.notifier.close();
    await this.pool.end();
  }

  async jobsInsert(params: { jobs: readonly NewJob[]; now: number }): Promise<InsertResult[]> {
    const { jobs, now } = params;
    if (jobs.length === 0) return [];
    const ids = new Set<string>();
    jobs.forEach((j, i) => {
      // The primary key holds the due time (partition key), so it cannot catch one id
      // given twice at two due times: ids are unique by construction (ULIDs), checked here.
      if (ids.has(j.id))
        throw new InvalidJobError(`jobs[${i}].id`, "an id not repeated in the batch", j.id);
      ids.add(j.id);
    });
    checkJobTags(jobs);
    const place = placeJobs(jobs, this.bucketWidthMs, this.shardCount);
    const byId = new Map(jobs.map((j) => [j.id, { ...j, tags: j.tags ?? [] }]));
    await this.ensureLive(place.bucket, now);
    const results = jobs.some((j) => j.key !== null)
      ? await diskFullAs("inserting jobs", () =>
          withRetry(() =>
            inTransaction(this.pool, (c) =>
              insertKeyed(c, this.sql, jobs, place, now, this.bucketWidthMs, (client, rows) =>
                holdInserted(client, this.pauseSql, rows, byId, now),
              ),
            ),
          ),
        )
      : await this.run("inserting jobs", async () => {
          const { rows } = await this.pool.query<InsertedRow>(
            this.sql.liveInsert,
            insertArrays(jobs, place, now),
          );
          // Rows come back only while a pause holds: the covered ones are held, apart from
          // the insert (a job a claim takes meanwhile is held by the claim instead).
          const held =
            rows.length === 0
              ? new Map<string, string>()
              : await withRetry(() =>
                  inTransaction(this.pool, (c) => holdInserted(c, this.pauseSql, rows, byId, now)),
                );
          return jobs.map((j, i) => ({
            job: {
              ...newPendingJob(j, place.bucket[i]!, place.shard[i]!, now),
              pausedBy: held.get(j.id) ?? null,
            },
            created: true,
            outcome: "created" as const,
          }));
        });
    let earliest = Infinity;
    for (const r of results) if (insertPlaced(r) && r.job.dueAt < earliest) earliest = r.job.dueAt;
    if (earliest !== Infinity) await this.notifyEarlier(earliest, now);
    return results;
  }

  async jobGet(params: { id: string; tenant?: string }): Promise<Job | null> {
    const shard = shardOf(params.id, this.shardCount);
    const { rows } = await this.run("reading a job", () =>
      this.pool.query<JobRow>(this.sql.jobById, [shard, params.id]),
    );
    const row = rows[0];
    if (!row || (params.tenant !== undefined && row.tenant !== params.tenant)) return null;
    return rowToJob(row);
  }

  async jobGetByKey(params: { tenant: string; key: string }): Promise<Job | null> {
    const { rows } = await this.run("reading a job by key", () =>
      this.pool.query<{ id: string }>(this.sql.keysLookup, [[params.tenant], [params.key]]),
    );
    const id = rows[0]?.id;
    if (id === undefined) return null;
    const job = await this.jobGet({ id, tenant: params.tenant });
    return job && (job.status === "pending" || job.status === "claimed") ? job : null;
  }

  async jobsList(p: JobsListParams): Promise<Job[]> {
    return this.run("listing jobs", () => listJobs(this.pool, this.sql, p));
  }

  async jobsListByTag(params: TagListParams): Promise<TagPage> {
    return this.run("listing jobs by tag", () => listByTag(this.pool, this.sql, params));
  }

  async jobsCountByTag(params: TagQuery): Promise<number> {
    return this.run("counting jobs by tag", () => countByTag(this.pool, this.sql, params));
  }

  /** PostgreSQL indexes every pending job by due time: there is nothing to stage. */
  async bucketsStage(_params: { until: number; maxRows: number }): Promise<StageResult> {
    return { rows: 0, buckets: 0, done: true, unstagedFrom: null };
  }

  /** See claim.ts: the due prefix, or shared out per tenant. */
  async jobsClaimDue(params: ClaimParams): Promise<Job[]> {
    return this.claims.claim(params);
  }

  async jobsSettle(params: {
    now: number;
    settlements: readonly Settlement[];
  }): Promise<boolean[]> {
    const list = params.settlements;
    if (list.length === 0) return [];
    const retryAt = list.map(settlementRetryAt);
    const retryBucket = retryAt.map((at) =>
      at === null ? null : bucketOf(at, this.bucketWidthMs),
    );
    await this.ensureLive(
      retryBucket.filter((b) => b !== null),
      params.now,
    );
    await this.ensureHistory(params.now);
    const arrays = [
      list.map((st) => st.id),
      list.map((st) => shardOf(st.id, this.shardCount)),
      list.map((st) => st.fence),
      list.map((st) => st.outcome),
      list.map((st) => (st.outcome === "succeeded" ? JSON.stringify(st.result) : null)),
      list.map((st) => ("error" in st ? (st.error ?? null) : null)),
      list.map((st) => st.firedAt),
      retryAt,
      retryBucket,
      params.now,
    ];
    // the partitions the callbacks go to (core/callbacks.ts): they are due at once
    await this.ensureLive(
      list.flatMap((st) => (st.callback ? [bucketOf(st.callback.dueAt, this.bucketWidthMs)] : [])),
      params.now,
    );
    const { rows, called } = await this.run("settling jobs", () =>
      withRetry(() => settleWithCallbacks(this.callbackDeps(), list, arrays, params.now)),
    );
    if (called > 0) await this.notifyEarlier(params.now, params.now);
    const applied = new Set(rows.map((r) => `${r.id}:${r.fence}`));
    const earliestRetry = Math.min(
      ...list.flatMap((st, i) => {
        const at = retryAt[i] ?? null;
        return at !== null && applied.has(`${st.id}:${st.fence}`) ? [at] : [];
      }),
    );
    if (Number.isFinite(earliestRetry)) await this.notifyEarlier(earliestRetry, params.now);
    return list.map((st) => applied.has(`${st.id}:${st.fence}`));
  }

  async jobCancel(params: { id: string; tenant?: string; now: number }): Promise<CancelResult> {
    await this.ensureHistory(params.now);
    for (let attempt = 0; ; attempt++) {
      const { job, next } = await this.run("cancelling a job", () =>
        withRetry(() =>
          inTransaction(this.pool, (c) =>
            cancelAndSkip(c, this.series, params, () => {
              this.idNow = params.now;
              return this.newId();
            }),
          ),
        ),
      );
      if (next) await this.notifyEarlier(next.dueAt, params.now);
      if (job) return { outcome: "cancelled", job };
      const current = await this.jobGet(params);
      if (!current) return { outcome: "not-found" };
      // Still pending: a concurrent reschedule moved the row under us; try again.
      if (current.status !== "pending" || attempt >= 3)
        return { outcome: "too-late", job: current };
    }
  }

  async jobReschedule(params: RescheduleParams): Promise<RescheduleResult> {
    return this.moveJob(params, "pending");
  }

  async jobRetry(params: RescheduleParams): Promise<RescheduleResult> {
    return this.moveJob(params, "dead");
  }

  /** Reschedule (pending -> pending) and retry (dead -> pending) share their checks. */
  private async moveJob(p: RescheduleParams, from: "pending" | "dead"): Promise<RescheduleResult> {
    const bucket = bucketOf(p.dueAt, this.bucketWidthMs);
    await this.ensureLive([bucket], p.now);
    const shard = shardOf(p.id, this.shardCount);
    const args: Parameters<typeof moveOnce>[3] = [
      shard,
      p.id,
      p.tenant ?? null,
      p.expectedVersion ?? null,
      p.dueAt,
      bucket,
      p.now,
    ];
    for (let attempt = 0; ; attempt++) {
      const { rows, holder } = await this.run(
        from === "pending" ? "rescheduling a job" : "retrying a job",
        () => withRetry(() => moveOnce(this.pool, this.sql, from, args)),
      );
      if (rows[0]) {
        const job = rowToJob(rows[0]);
        // a held job stays held (pending-rows.ts): no node can claim it at its new time
        if (job.pausedBy === null) await this.notifyEarlier(p.dueAt, p.now);
        return { outcome: "rescheduled", job };
      }
      const current = await this.jobGet({
        id: p.id,
        ...(p.tenant === undefined ? {} : { tenant: p.tenant }),
      });
      if (!current) return { outcome: "not-found" };
      if (current.status !== from) return { outcome: "too-late", job: current };
      if (p.expectedVersion !== undefined && current.version !== p.expectedVersion) {
        return { outcome: "version-conflict", job: current };
      }
      if (holder !== undefined) {
        const holding = await this.jobGet({ id: holder });
        if (holding && (holding.status === "pending" || holding.status === "claimed")) {
          return { outcome: "key-conflict", job: current, holder: holding };
        }
      }
      if (attempt >= 3) return { outcome: "too-late", job: current };
    }
  }

  async leasesExpire(params: { now: number; limit: number }): Promise<LeaseExpiryResult> {
    if (params.limit <= 0) return { requeued: 0, dead: 0, nextExpiresAt: null };
    const error = "lease expired before the job was acknowledged";
    await this.ensureHistory(params.now);
    await this.ensureLive([bucketOf(params.now, this.bucketWidthMs)], params.now);
    const { row, called } = await this.run("expiring leases", () =>
      withRetry(() =>
        expireLeasesWithCallbacks(
          this.callbackDeps(),
          { now: params.now, limit: params.limit, error },
          () => this.newId(),
        ),
      ),
    );
    // The requeued jobs may be of other nodes' shards: wake their owners as a write would.
    const earliest =
      called > 0 ? Math.min(row?.earliest ?? params.now, params.now) : (row?.earliest ?? null);
    await this.notifyRequeued(earliest, params.now);
    return {
      requeued: row?.requeued ?? 0,
      dead: row?.dead ?? 0,
      nextExpiresAt: row?.next_expires_at ?? null,
    };
  }

  /**
   * Whether the jobs' tablespace takes writes again: a write of 64 KiB into freshly
   * truncated files (statements.ts), truncated again so nothing stays. Throws StorageFullError (disk_full) while
   * the space is still missing. Run on a short backoff while storage is full.
   */
  async storageProbe(_params: { now: number }): Promise<void> {
    await this.run("probing storage", () =>
      inTransaction(this.pool, async (c) => {
        await c.query(this.sql.storageProbeReset);
        await c.query(this.sql.storageProbeWrite);
        await c.query(this.sql.storageProbeReset);
      }),
    );
  }

  async leasesRenew(params: { owner: string; now: number; leaseMs: number }): Promise<number> {
    const r = await this.run("renewing leases", () =>
      withRetry(() =>
        this.pool.query(this.sql.leasesRenew, [params.owner, params.now, params.leaseMs]),
      ),
    );
    return r.rowCount ?? 0;
  }

  async leasesReleaseStale(params: StaleLeasesParams): Promise<number> {
    if (params.limit <= 0) return 0;
    const { rows } = await this.run("releasing stale claims", () =>
      withRetry(() =>
        this.pool.query<{ released: number; earliest: number | null }>(
          this.sql.leasesReleaseStale,
          [params.ownerPrefix, params.exceptOwner, params.expiresBy, params.limit, params.now],
        ),
      ),
    );
    await this.notifyRequeued(rows[0]?.earliest ?? null, params.now);
    return rows[0]?.released ?? 0;
  }

  async jobsNextDue(params: { now: number; shards?: readonly number[] }): Promise<NextDue> {
    const { rows } = await this.run("reading the next due time", () =>
      this.pool.query<{ bucket: number | null; due_at: number | null }>(this.sql.nextDue, [
        this.bucketWidthMs,
        params.shards === undefined ? null : [...params.shards],
      ]),
    );
    const earliestDue = rows[0]?.due_at ?? null;
    // Only an all-shards reading says what every node knows; a sharded one must not
    // suppress notifications meant for other nodes' shards.
    this.notifier.observe(params.shards === undefined ? earliestDue : null);
    return { earliestDue, nextUnstagedBucket: null };
  }

  async bucketsCounts(params: {
    from: number;
    to: number;
    tenant?: string;
  }): Promise<BucketCount[]> {
    const { rows } = await this.run("reading bucket counts", () =>
      this.pool.query<{ bucket: number; pending: number }>(this.sql.bucketCounts, [
        params.from,
        params.to,
        params.tenant ?? null,
      ]),
    );
    return rows.map((r) => ({ bucket: r.bucket, pending: r.pending }));
  }

  async jobsCountByStatus(params: { tenant?: string }): Promise<Record<JobStatus, number>> {
    const { rows } = await this.run("counting jobs", () =>
      this.pool.query<{ status: JobStatus; n: number }>(this.sql.statusCounts, [
        params.tenant ?? null,
      ]),
    );
    const out = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    // pending comes in two rows: the bucket counters and the pauses' held counts
    for (const r of rows) out[r.status] += Number(r.n);
    return out;
  }

  /**
   * Drops whole history partitions that end before `before` (their rows count toward the
   * result, which may then exceed `limit`: a drop costs the same for any size), then
   * deletes up to what is left of `limit` rows of the partition straddling `before`.
   */
  async historyPurge(params: { before: number; limit: number }): Promise<number> {
    const dropped = await this.run("dropping history partitions", () =>
      this.partitions.dropHistoryBefore(params.before),
    );
    const left = params.limit - dropped;
    if (left <= 0) return dropped;
    const r = await this.run("purging history", () =>
      withRetry(() =>
        this.pool.query<{ n: number }>(this.sql.historyDeleteOldest, [params.before, left]),
      ),
    );
    return dropped + (r.rows[0]?.n ?? 0);
  }

  /** See changes.ts: (tx, seq) order, read below the oldest transaction in flight. */
  async changesRead(params: {
    tenant?: string;
    after?: ChangePosition;
    limit: number;
  }): Promise<ChangesPage> {
    try {
      return await readChanges(this.pool, this.sql, params);
    } catch (err) {
      // A cursor retention went past is the caller's to handle, not a database failure.
      if (err instanceof ChangeCursorExpiredError) throw err;
      throw new Error("reading changes", { cause: err });
    }
  }

  async changesHead(_params: { tenant?: string }): Promise<string> {
    return this.run("reading the change feed's head", () => headCursor(this.pool, this.sql));
  }

  async changesPurge(params: { before: number; limit: number }): Promise<number> {
    return this.run("purging changes", () =>
      withRetry(() => purgeChanges(this.pool, this.sql, params.before, params.limit)),
    );
  }

  async schedulesInsert(params: {
    schedule: Schedule;
    job: NewJob | null;
    now: number;
  }): Promise<{ schedule: Schedule; created: boolean }> {
    await this.ensureLive(
      params.job ? [bucketOf(params.job.dueAt, this.bucketWidthMs)] : [],
      params.now,
    );
    const r = await this.run("inserting a schedule", () =>
      withRetry(() => inTransaction(this.pool, (c) => insertSchedule(c, this.series, params))),
    );
    if (r.created && params.job) await this.notifyEarlier(params.job.dueAt, params.now);
    return r;
  }

  async scheduleGet(params: { id: string; tenant?: string }): Promise<Schedule | null> {
    const { rows } = await this.run("reading a schedule", () =>
      this.pool.query<ScheduleRow>(this.series.series.byId, [params.id]),
    );
    const row = rows[0];
    if (!row || (params.tenant !== undefined && row.tenant !== params.tenant)) return null;
    return rowToSchedule(row);
  }

  async scheduleGetByKey(params: { tenant: string; key: string }): Promise<Schedule | null> {
    const { rows } = await this.run("reading a schedule by key", () =>
      this.pool.query<ScheduleRow>(this.series.series.byKey, [params.tenant, params.key]),
    );
    return rows[0] ? rowToSchedule(rows[0]) : null;
  }

  async schedulesList(params: SchedulesListParams): Promise<Schedule[]> {
    return this.run("listing schedules", () => listSchedules(this.pool, this.series, params));
  }

  async scheduleReplace(params: ScheduleReplaceParams): Promise<ScheduleChangeResult> {
    await this.ensureLive(
      params.job ? [bucketOf(params.job.dueAt, this.bucketWidthMs)] : [],
      params.now,
    );
    await this.ensureHistory(params.now);
    const r = await this.run("changing a schedule", () =>
      withRetry(() => inTransaction(this.pool, (c) => replaceSchedule(c, this.series, params))),
    );
    if (r.outcome === "changed" && params.job)
      await this.notifyEarlier(params.job.dueAt, params.now);
    return r;
  }

  async scheduleDelete(params: ScheduleDeleteParams): Promise<ScheduleChangeResult> {
    await this.ensureHistory(params.now);
    return this.run("deleting a schedule", () =>
      withRetry(() => inTransaction(this.pool, (c) => deleteSchedule(c, this.series, params))),
    );
  }

  async operationsInsert(params: {
    operation: Operation;
  }): Promise<{ operation: Operation; created: boolean }> {
    return this.run("inserting an operation", () =>
      withRetry(() => insertOperation(this.pool, this.ops, params.operation)),
    );
  }

  async operationGet(params: { id: string; tenant?: string }): Promise<Operation | null> {
    return this.run("reading an operation", () =>
      getOperation(this.pool, this.ops, params.id, params.tenant),
    );
  }

  async operationsList(params: OperationsListParams): Promise<Operation[]> {
    return this.run("listing operations", () => listOperations(this.pool, this.ops, params));
  }

  async operationCancel(params: {
    id: string;
    tenant?: string;
    now: number;
  }): Promise<Operation | null> {
    return this.run("cancelling an operation", () =>
      withRetry(() => inTransaction(this.pool, (c) => cancelOperation(c, this.ops, params))),
    );
  }

  /**
   * One batch in one transaction (operations.ts), the record locked. The partitions the
   * batch moves jobs into are made first, from a read of the same jobs outside it.
   */
  async operationStep(params: {
    id: string;
    now: number;
    limit: number;
  }): Promise<OperationStepResult | null> {
    const op = await this.operationGet({ id: params.id });
    if (!op) return null;
    if (op.kind === "cancel" || op.kind === "erase") await this.ensureHistory(params.now);
    if (op.kind === "reschedule" || op.kind === "retry") {
      const rows = await this.run("reading an operation batch", () =>
        readCandidates(this.pool, this.ops, op, params.limit),
      );
      await this.ensureLive(movedBuckets(op, rows, this.bucketWidthMs, params.now), params.now);
    }
    const r = await this.run("running an operation batch", () =>
      withRetry(() => inTransaction(this.pool, (c) => stepOperation(c, this.ops, params))),
    );
    if (
      r &&
      r.operation.changed > op.changed &&
      (op.kind === "reschedule" || op.kind === "retry")
    ) {
      // other nodes may own the moved jobs' shards: wake them as a single move would
      this.notifier.observe(null);
      await this.notifyEarlier(params.now, params.now);
    }
    return r;
  }

  async clockRead(): Promise<number> {
    const { rows } = await this.run("reading the database's clock", () =>
      this.pool.query<{ now_ms: number }>(this.sql.clockRead),
    );
    return rows[0]!.now_ms;
  }

  onEarlierDue(listener: (dueAt: number) => void, loop?: EarlierDueLoop): () => void {
    return this.notifier.subscribe(listener, loop);
  }

  /** Resolves once the LISTEN connection is up (tests use it before writing). */
  async listening(): Promise<void> {
    await this.notifier.ready();
  }

  /** What core/callbacks' PostgreSQL writes need (stores/postgres/callbacks.ts). */
  private callbackDeps(): CallbackDeps {
    return {
      pool: this.pool,
      sql: this.sql,
      bucketWidthMs: this.bucketWidthMs,
      shardCount: this.shardCount,
    };
  }

  /** Creates missing live partitions for buckets inside the on-demand window around `now`. */
  private async ensureLive(buckets: readonly number[], now: number): Promise<void> {
    if (buckets.length === 0) return;
    const w = this.bucketWidthMs;
    const current = bucketOf(now, w);
    const lo = current - (this.o.onDemandBehindMs ?? 2 * w);
    const hi = current + (this.o.onDemandAheadMs ?? 400 * w);
    const wanted = new Set<number>();
    for (const b of buckets) if (b >= lo && b <= hi) wanted.add(b);
    if (wanted.size === 0) return;
    await this.run("creating partitions", () =>
      withRetry(() => this.partitions.ensure("jobs_live", wanted)),
    );
  }

  /** Creates the history partition that rows finishing at `now` go to, if missing. */
  private async ensureHistory(now: number): Promise<void> {
    const period = bucketOf(now, this.historyWidthMs);
    await this.run("creating history partitions", () =>
      withRetry(() => this.partitions.ensure("jobs_history", [period])),
    );
  }

  /**
   * Jobs came back to pending (lease expiry, a stale incarnation's claims): they are due
   * already, so every listening node is told, whatever this process last read as the
   * earliest due time (it may have read only its own shards).
   */
  private async notifyRequeued(earliest: number | null, now: number): Promise<void> {
    if (earliest === null) return;
    this.notifier.observe(null);
    // The rows are back already; a lost notification only costs the idle wake-up.
    await this.notifyEarlier(earliest, now).catch((err: unknown) =>
      this.o.onError(err instanceof Error ? err : new Error(String(err))),
    );
  }

  private async notifyEarlier(dueAt: number, now: number): Promise<void> {
    if (!this.notifier.shouldNotify(dueAt, now, this.o.notifyWithinMs)) return;
    await this.run("notifying other nodes", () =>
      this.pool.query(this.sql.notify, [this.sql.notifyChannel, String(dueAt)]),
    );
  }

  /** Runs one operation, its error wrapped with `what` it was doing (see diskFullAs). */
  private async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await diskFullAs(what, fn);
    } catch (err) {
      if (err instanceof StorageFullError) throw err;
      throw new Error(what, { cause: err });
    }
  }
}

/**
 * Runs `fn`; the server's disk_full (SQLSTATE 53100: a write needed space the server does
 * not have, and its statement or transaction was rolled back) becomes a StorageFullError
 * naming `what` was being written, so callers can tell it from a bug. Other errors pass.
 */
async function diskFullAs<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if ((err as { code?: unknown }).code === "53100") {
      throw new StorageFullError(what, { cause: err });
    }
    throw err;
  }
}
