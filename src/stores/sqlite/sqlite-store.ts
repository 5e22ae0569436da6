import Database from "better-sqlite3";
import type { Job, JobStatus, NewJob } from "../../core/job.js";
import { JOB_STATUSES } from "../../core/job.js";
import { InvalidOptionError } from "../../core/errors.js";
import type {
  BucketCount,
  CancelResult,
  ClaimParams,
  InsertResult,
  JobsListParams,
  LeaseExpiryResult,
  NextDue,
  RescheduleParams,
  RescheduleResult,
  Settlement,
  StageResult,
  Store,
} from "../../store/store.js";
import { MIGRATIONS } from "./migrations.js";
import { CounterDeltas, decodeRow, rowToJob, type JobTuple, type StoredJob } from "./rows.js";
import { RAW_JOB_STATEMENTS, SQL } from "./statements.js";
import { listJobs } from "./list.js";

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
}

type Stmt = Database.Statement;

/**
 * The embedded store: one SQLite file in WAL mode, used by one process at a time for firing
 * (other processes, such as the CLI, may read and write it). better-sqlite3 is synchronous;
 * each method is one short transaction, bounded by its `limit`, so the event loop is never
 * held for long.
 */
export class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly bucketWidthMs: number;
  readonly shardCount: number;
  private readonly db: Database.Database;
  private readonly s: Record<keyof typeof SQL, Stmt>;

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
    this.db = new Database(options.path);
    try {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
      this.db.pragma(`cache_size = -${(options.cacheMiB ?? 64) * 1024}`);
      this.db.pragma("temp_store = MEMORY");
      this.migrateSync();
      this.bucketWidthMs = this.fixedSetting("bucket_width_ms", width, 3_600_000, "bucketWidthMs");
      this.shardCount = this.fixedSetting("shard_count", shards, 1, "shardCount");
    } catch (err) {
      this.db.close();
      throw err;
    }
    const prepared = {} as Record<keyof typeof SQL, Stmt>;
    for (const [name, sql] of Object.entries(SQL)) {
      prepared[name as keyof typeof SQL] = this.db.prepare(sql);
    }
    for (const name of RAW_JOB_STATEMENTS) prepared[name].raw(true);
    this.s = prepared;
  }

  /** The underlying connection, for store-specific tests and benchmarks only. */
  get connection(): Database.Database {
    return this.db;
  }

  async migrate(): Promise<void> {
    this.migrateSync();
  }

  private migrateSync(): void {
    const apply = this.db.transaction(() => {
      const current = this.db.pragma("user_version", { simple: true }) as number;
      for (let v = current; v < MIGRATIONS.length; v++) {
        this.db.exec(MIGRATIONS[v]!);
        this.db.pragma(`user_version = ${v + 1}`);
      }
    });
    apply.immediate();
  }

  /**
   * Settings fixed at creation: recorded on first open (`wanted`, else `dflt`); a later open
   * adopts the stored value, and asking for a different one is refused.
   */
  private fixedSetting(
    name: string,
    wanted: number | undefined,
    dflt: number,
    option: string,
  ): number {
    const row = this.db.prepare(SQL.metaGet).get(name) as { value: string } | undefined;
    if (!row) {
      this.db.prepare(SQL.metaSet).run(name, String(wanted ?? dflt));
      return wanted ?? dflt;
    }
    const stored = Number(row.value);
    if (wanted !== undefined && stored !== wanted) {
      throw new InvalidOptionError(
        option,
        `${stored} (the value this database was created with)`,
        wanted,
      );
    }
    return stored;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  async jobsInsert(params: { jobs: readonly NewJob[]; now: number }): Promise<InsertResult[]> {
    const { jobs, now } = params;
    const run = this.db.transaction((): InsertResult[] => {
      const deltas = new CounterDeltas();
      const staged = new Map<number, boolean>();
      const byKey = new Map<string, Job>();
      const results: InsertResult[] = [];
      for (const j of jobs) {
        if (j.key !== null) {
          const k = `${j.tenant}\u0000${j.key}`;
          const seen = byKey.get(k);
          if (seen) {
            results.push({ job: seen, created: false });
            continue;
          }
          const existing = this.s.jobByLiveKey.get(j.tenant, j.key) as JobTuple | undefined;
          if (existing) {
            const job = rowToJob(existing);
            byKey.set(k, job);
            results.push({ job, created: false });
            continue;
          }
        }
        const info = this.s.jobInsert.run(
          j.id,
          j.tenant,
          j.key,
          j.dueAt,
          j.bucket,
          j.shard,
          JSON.stringify(j.payload),
          j.target,
          j.targetOptions === null ? null : JSON.stringify(j.targetOptions),
          j.maxAttempts,
          j.expireAfterMs,
          now,
          now,
        );
        const seq = Number(info.lastInsertRowid);
        let isStaged = staged.get(j.bucket);
        if (isStaged === undefined) {
          isStaged = this.s.stagingGet.get(j.bucket) !== undefined;
          staged.set(j.bucket, isStaged);
        }
        if (isStaged) this.s.hotInsert.run(j.dueAt, seq);
        deltas.pending(j.bucket, j.tenant, 1);
        deltas.status(j.tenant, "pending", 1);
        const job = newJobRow(j, now);
        if (j.key !== null) byKey.set(`${j.tenant}\u0000${j.key}`, job);
        results.push({ job, created: true });
      }
      this.flush(deltas);
      return results;
    });
    return run.immediate();
  }

  async jobGet(params: { id: string; tenant?: string }): Promise<Job | null> {
    return this.ownedRow(params.id, params.tenant)?.job ?? null;
  }

  async jobGetByKey(params: { tenant: string; key: string }): Promise<Job | null> {
    const row = this.s.jobByLiveKey.get(params.tenant, params.key) as JobTuple | undefined;
    return row ? rowToJob(row) : null;
  }

  async jobsList(params: JobsListParams): Promise<Job[]> {
    return listJobs(this.s, this.bucketWidthMs, params);
  }

  async bucketsStage(params: { until: number; maxRows: number }): Promise<StageResult> {
    let rows = 0;
    let buckets = 0;
    const stageChunk = this.db.transaction((budget: number): number | null => {
      const next = this.s.stageNextBucket.get(params.until) as { bucket: number } | undefined;
      if (!next) return null;
      const state = this.s.stagingGet.get(next.bucket) as { cursor: number } | undefined;
      const found = this.s.stageRead.all(next.bucket, state?.cursor ?? 0, budget) as {
        due_at: number;
        seq: number;
      }[];
      for (const r of found) this.s.hotInsert.run(r.due_at, r.seq);
      rows += found.length;
      const cursor = found.length > 0 ? found[found.length - 1]!.seq : (state?.cursor ?? 0);
      const complete = found.length < budget;
      this.s.stagingSet.run(next.bucket, cursor, complete ? 1 : 0);
      if (complete) buckets++;
      return next.bucket;
    });
    for (;;) {
      const budget = params.maxRows - rows;
      const bucket = budget > 0 ? stageChunk.immediate(budget) : this.unstagedFrom(params.until);
      if (bucket === null) break;
      if (budget <= 0) return { rows, buckets, done: false, unstagedFrom: bucket };
    }
    this.s.stagingMarkEmpty.run({
      b: Math.floor(params.until / this.bucketWidthMs) * this.bucketWidthMs,
    });
    this.s.stagingPrune.run(params.until - 2 * this.bucketWidthMs);
    return { rows, buckets, done: true, unstagedFrom: null };
  }

  private unstagedFrom(until: number): number | null {
    const next = this.s.stageNextBucket.get(until) as { bucket: number } | undefined;
    return next ? next.bucket : null;
  }

  async jobsClaimDue(params: ClaimParams): Promise<Job[]> {
    const run = this.db.transaction((): Job[] => {
      const prefix = this.s.hotDuePrefix.all(params.dueBefore, params.limit) as {
        due_at: number;
        seq: number;
      }[];
      const last = prefix[prefix.length - 1];
      if (!last) return [];
      this.s.hotDeletePrefix.run(last.due_at, last.seq);
      const rows = this.s.jobsClaim.all({
        seqs: JSON.stringify(prefix.map((p) => p.seq)),
        owner: params.owner,
        leaseUntil: params.now + params.leaseMs,
        now: params.now,
      }) as JobTuple[];
      const jobs = rows.map(rowToJob);
      const deltas = new CounterDeltas();
      for (const j of jobs) deltas.move(j.tenant, "pending", "claimed", j.bucket, j.bucket);
      this.flush(deltas);
      return jobs.sort(byDue);
    });
    return run.immediate();
  }

  async jobsSettle(params: {
    now: number;
    settlements: readonly Settlement[];
  }): Promise<boolean[]> {
    const { now } = params;
    const run = this.db.transaction((): boolean[] => {
      const deltas = new CounterDeltas();
      const succeeded = this.settleSucceeded(params.settlements, now, deltas);
      const out = params.settlements.map((st, i) => {
        if (st.outcome === "succeeded") return succeeded[i] ?? false;
        if (st.outcome === "release") {
          const r = this.s.settleRelease.get({ id: st.id, fence: st.fence, now }) as
            PlacedRow | undefined;
          if (!r) return false;
          deltas.move(r.tenant, "claimed", "pending", r.bucket, r.bucket);
          this.placeInHot(r);
          return true;
        }
        if (st.outcome === "retry") {
          const r = this.s.settleRetry.get({
            id: st.id,
            fence: st.fence,
            retryAt: st.retryAt,
            bucket: st.bucket,
            error: st.error,
            now,
            firedAt: st.firedAt,
          }) as PlacedRow | undefined;
          if (!r) return false;
          deltas.move(r.tenant, "claimed", "pending", r.bucket, r.bucket);
          this.placeInHot(r);
          return true;
        }
        const r = this.s.settleFinish.get({
          id: st.id,
          fence: st.fence,
          status: st.outcome,
          result: null,
          error: st.error,
          now,
          firedAt: st.firedAt,
        }) as PlacedRow | undefined;
        if (!r) return false;
        deltas.move(r.tenant, "claimed", st.outcome, r.bucket, r.bucket);
        return true;
      });
      this.flush(deltas);
      return out;
    });
    return run.immediate();
  }

  /** The successes of a batch in one statement; returns applied flags by settlement index. */
  private settleSucceeded(
    settlements: readonly Settlement[],
    now: number,
    deltas: CounterDeltas,
  ): (boolean | undefined)[] {
    const batch: { i: string; f: number; r: string; t: number }[] = [];
    const index = new Map<string, number>();
    settlements.forEach((st, i) => {
      if (st.outcome !== "succeeded") return;
      batch.push({ i: st.id, f: st.fence, r: JSON.stringify(st.result), t: st.firedAt });
      index.set(st.id, i);
    });
    const applied: (boolean | undefined)[] = [];
    if (batch.length === 0) return applied;
    const rows = this.s.settleSucceededMany.all({ now, batch: JSON.stringify(batch) }) as {
      id: string;
      tenant: string;
    }[];
    for (const r of rows) {
      applied[index.get(r.id)!] = true;
      deltas.move(r.tenant, "claimed", "succeeded", 0, 0);
    }
    return applied;
  }

  async jobCancel(params: { id: string; tenant?: string; now: number }): Promise<CancelResult> {
    const run = this.db.transaction((): CancelResult => {
      const current = this.ownedRow(params.id, params.tenant);
      if (!current) return { outcome: "not-found" };
      const row = this.s.jobCancel.get({ id: params.id, now: params.now }) as JobTuple | undefined;
      if (!row) return { outcome: "too-late", job: current.job };
      const cancelled = rowToJob(row);
      this.s.hotDelete.run(current.job.dueAt, current.seq);
      const deltas = new CounterDeltas();
      deltas.move(cancelled.tenant, "pending", "cancelled", current.job.bucket, current.job.bucket);
      this.flush(deltas);
      return { outcome: "cancelled", job: cancelled };
    });
    return run.immediate();
  }

  async jobReschedule(params: RescheduleParams): Promise<RescheduleResult> {
    return this.moveJob(params, "pending");
  }

  async jobRetry(params: RescheduleParams): Promise<RescheduleResult> {
    return this.moveJob(params, "dead");
  }

  /** Reschedule (pending -> pending) and retry (dead -> pending) share their bookkeeping. */
  private moveJob(params: RescheduleParams, from: "pending" | "dead"): Promise<RescheduleResult> {
    const run = this.db.transaction((): RescheduleResult => {
      const current = this.ownedRow(params.id, params.tenant);
      if (!current) return { outcome: "not-found" };
      if (current.job.status !== from) return { outcome: "too-late", job: current.job };
      if (params.expectedVersion !== undefined && current.job.version !== params.expectedVersion) {
        return { outcome: "version-conflict", job: current.job };
      }
      if (from === "dead" && current.job.key !== null) {
        const holder = this.s.jobByLiveKey.get(current.job.tenant, current.job.key) as
          JobTuple | undefined;
        if (holder) return { outcome: "key-conflict", job: current.job, holder: rowToJob(holder) };
      }
      const stmt = from === "pending" ? this.s.jobReschedule : this.s.jobRetry;
      const row = stmt.get({
        id: params.id,
        dueAt: params.dueAt,
        bucket: params.bucket,
        expectedVersion: params.expectedVersion ?? null,
        now: params.now,
      }) as JobTuple | undefined;
      if (!row) return { outcome: "too-late", job: current.job };
      const moved = rowToJob(row);
      if (from === "pending") this.s.hotDelete.run(current.job.dueAt, current.seq);
      this.placeInHot({ seq: current.seq, bucket: moved.bucket, due_at: moved.dueAt });
      const deltas = new CounterDeltas();
      deltas.move(moved.tenant, from, "pending", current.job.bucket, moved.bucket);
      this.flush(deltas);
      return { outcome: "rescheduled", job: moved };
    });
    return Promise.resolve(run.immediate());
  }

  async leasesExpire(params: { now: number; limit: number }): Promise<LeaseExpiryResult> {
    const run = this.db.transaction((): LeaseExpiryResult => {
      const expired = this.s.leasesExpired.all(params.now, params.limit) as {
        id: string;
        fence: number;
        attempts: number;
        max_attempts: number;
      }[];
      const deltas = new CounterDeltas();
      let requeued = 0;
      let dead = 0;
      for (const e of expired) {
        const error = "lease expired before the job was acknowledged";
        if (e.attempts >= e.max_attempts) {
          const r = this.s.settleFinish.get({
            id: e.id,
            fence: e.fence,
            status: "dead",
            result: null,
            error,
            now: params.now,
            firedAt: null,
          }) as PlacedRow | undefined;
          if (r) {
            deltas.move(r.tenant, "claimed", "dead", r.bucket, r.bucket);
            dead++;
          }
          continue;
        }
        const r = this.s.leaseRequeue.get({ id: e.id, fence: e.fence, now: params.now, error }) as
          PlacedRow | undefined;
        if (r) {
          deltas.move(r.tenant, "claimed", "pending", r.bucket, r.bucket);
          this.placeInHot(r);
          requeued++;
        }
      }
      this.flush(deltas);
      return { requeued, dead };
    });
    return run.immediate();
  }

  async jobsNextDue(_params: { now: number }): Promise<NextDue> {
    const hot = this.s.hotEarliest.get() as { due_at: number | null };
    const unstaged = this.s.nextUnstagedBucket.get() as { bucket: number | null };
    return { earliestDue: hot.due_at, nextUnstagedBucket: unstaged.bucket };
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

  async historyPurge(params: { before: number; limit: number }): Promise<number> {
    const run = this.db.transaction((): number => {
      const rows = this.s.historyOldest.all(params.before, params.limit) as {
        seq: number;
        tenant: string;
        status: JobStatus;
      }[];
      const deltas = new CounterDeltas();
      for (const r of rows) {
        this.s.jobDeleteBySeq.run(r.seq);
        deltas.status(r.tenant, r.status, -1);
      }
      this.flush(deltas);
      return rows.length;
    });
    return run.immediate();
  }

  /** The row of `id` if it exists and belongs to `tenant` (when given). */
  private ownedRow(id: string, tenant: string | undefined): StoredJob | undefined {
    const row = this.s.jobById.get(id) as JobTuple | undefined;
    if (!row) return undefined;
    const stored = decodeRow(row);
    if (tenant !== undefined && stored.job.tenant !== tenant) return undefined;
    return stored;
  }

  /**
   * A job that became pending (again) goes into the hot index when its bucket is staged or
   * being staged; otherwise staging will find it through jobs_pending_bucket.
   */
  private placeInHot(r: { seq: number; bucket: number; due_at: number }): void {
    if (this.s.stagingGet.get(r.bucket) !== undefined) this.s.hotInsert.run(r.due_at, r.seq);
  }

  private flush(d: CounterDeltas): void {
    for (const b of d.buckets.values()) {
      if (b.delta === 0) continue;
      this.s.bucketCountAdd.run(b.bucket, b.tenant, b.delta);
      if (b.delta < 0) this.s.bucketCountDropEmpty.run(b.bucket, b.tenant);
    }
    for (const s of d.statuses.values()) {
      if (s.delta !== 0) this.s.statusCountAdd.run(s.tenant, s.status, s.delta);
    }
  }
}

interface PlacedRow {
  seq: number;
  tenant: string;
  bucket: number;
  due_at: number;
}

function byDue(a: Job, b: Job): number {
  return a.dueAt - b.dueAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The row a fresh insert produced, built without reading it back (a literal: spreads are slow here). */
function newJobRow(j: NewJob, now: number): Job {
  return {
    id: j.id,
    tenant: j.tenant,
    key: j.key,
    status: "pending",
    dueAt: j.dueAt,
    bucket: j.bucket,
    shard: j.shard,
    payload: j.payload,
    target: j.target,
    targetOptions: j.targetOptions,
    attempts: 0,
    maxAttempts: j.maxAttempts,
    expireAfterMs: j.expireAfterMs,
    version: 1,
    leaseOwner: null,
    leaseExpiresAt: null,
    fence: 0,
    lastError: null,
    lastResult: null,
    createdAt: now,
    updatedAt: now,
    firedAt: null,
    finishedAt: null,
  };
}
