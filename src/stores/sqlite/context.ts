import type Database from "better-sqlite3";
import { bucketOf } from "../../core/buckets.js";
import { StorageFullError } from "../../core/errors.js";
import { createIdGenerator } from "../../core/ids.js";
import type { Ballast } from "./ballast.js";
import { ChangeBuffer, type ChangeRecord } from "./feed.js";
import type { ChangeKind } from "../../core/change.js";
import type { JobStatus } from "../../core/job.js";
import type { CounterDeltas } from "./rows.js";
import { decodeRow, type JobTuple, type StoredJob } from "./rows.js";
import type { Statements } from "./statements.js";

export type { Statements } from "./statements.js";

/**
 * What every SQLite operation needs: the connection, its statements, where jobs live (the
 * file's bucket width and shard count), and the bookkeeping shared by writes (hot index
 * placement, counter deltas).
 */
export class SqliteContext {
  constructor(
    readonly db: Database.Database,
    readonly s: Statements,
    readonly bucketWidthMs: number,
    readonly shardCount: number,
    /** The disk's emergency reserve (ballast.ts), or null (":memory:", or turned off). */
    readonly ballast: Ballast | null = null,
  ) {
    this.tx = db.transaction((fn: () => unknown) => {
      const out = fn();
      this.changes.flush(this.db);
      return out;
    });
  }

  /** The change feed rows of the write in progress (see feed.ts), inserted as it commits. */
  private readonly changes = new ChangeBuffer();

  /** Records a transition in the feed, in the write transaction that makes it. */
  record(c: ChangeRecord, at: number): void {
    this.changes.add(c, at);
  }

  /**
   * Records one transition of many jobs read in this transaction (a bulk batch; `entries`
   * their [seq, walk_bucket] pairs as a JSON array, see changesInsertFromJobs) from their
   * rows, as they stand, in one statement. What was recorded before goes in first, so the
   * feed keeps the transaction's order.
   */
  recordJobs(c: { kind: ChangeKind; status: JobStatus }, entries: string, at: number): void {
    this.changes.flush(this.db);
    this.s.changesInsertFromJobs.run({ kind: c.kind, status: c.status, entries, at });
  }

  /**
   * recordJobs for the jobs inserted last in this transaction: every seq after `after` (a
   * rowid range; see insert-statements.ts jobInsertRows), as they stand.
   */
  recordJobsAfter(c: { kind: ChangeKind; status: JobStatus }, after: number, at: number): void {
    this.changes.flush(this.db);
    this.s.changesInsertFromJobsAfter.run({ kind: c.kind, status: c.status, after, at });
  }

  private idNow = 0;
  private readonly ids = createIdGenerator(() => this.idNow);

  /** A job id made at `now` (a series' next occurrence, written by a claim). */
  newId(now: number): string {
    this.idNow = now;
    return this.ids();
  }

  /** The bucket a job due at `dueAt` lives in: computed here, never taken from a caller. */
  bucketOf(dueAt: number): number {
    return bucketOf(dueAt, this.bucketWidthMs);
  }

  /**
   * A `shards` parameter as the JSON array the shard-filtered statements take; null when no
   * filter is needed (none given, or every shard of the file).
   */
  shardsFilter(shards: readonly number[] | undefined): string | null {
    if (shards === undefined) return null;
    const valid = shards.filter((s) => Number.isInteger(s) && s >= 0 && s < this.shardCount);
    return new Set(valid).size === this.shardCount ? null : JSON.stringify(shards);
  }

  /**
   * One transaction wrapper for every write: better-sqlite3 builds four wrapper functions per
   * `transaction()` call, a measurable cost on one-job writes (2.6-4.7 us a call).
   */
  private readonly tx: Database.Transaction<(fn: () => unknown) => unknown>;

  /**
   * Runs `fn` in a write transaction (BEGIN IMMEDIATE: takes the write lock up front). A
   * full disk (SQLITE_FULL, with the transaction rolled back whole) releases the ballast and
   * runs `fn` once more in the space it gave back, unless `create` (a create is refused
   * instead: the reserve is for firing). A write still refused becomes a StorageFullError
   * naming `what` was being written, so callers can tell it from a bug.
   */
  write<T>(what: string, fn: () => T, create = false): T {
    try {
      return this.tx.immediate(fn) as T;
    } catch (err) {
      this.changes.clear();
      if (!isFull(err)) throw err;
      const freed = this.ballast?.release() ?? false;
      if (!freed || create) throw new StorageFullError(what, { cause: err });
    }
    try {
      return this.tx.immediate(fn) as T;
    } catch (err) {
      this.changes.clear();
      if (isFull(err)) throw new StorageFullError(what, { cause: err });
      throw err;
    }
  }

  /** The row of `id` if it exists and belongs to `tenant` (when given). */
  ownedRow(id: string, tenant: string | undefined): StoredJob | undefined {
    const row = this.s.jobById.get(id) as JobTuple | undefined;
    if (!row) return undefined;
    const stored = decodeRow(row);
    if (tenant !== undefined && stored.job.tenant !== tenant) return undefined;
    return stored;
  }

  /**
   * A job that became pending (again) goes into the hot index when its bucket is staged or
   * being staged; otherwise staging will find it through jobs_bucket. A job a pause holds
   * stays out (pauses.ts gives it back on resume).
   */
  placeInHot(r: { seq: number; bucket: number; due_at: number; tenant: string }): void {
    if (this.s.heldGet.get(r.seq) !== undefined) return;
    if (this.isStaged(r.bucket)) this.s.hotInsert.run(r.due_at, r.seq, r.tenant);
  }

  /** Whether a bucket is staged or being staged (see bucketIsStaged in statements.ts). */
  isStaged(bucket: number): boolean {
    return this.s.bucketIsStaged.get({ bucket }) !== undefined;
  }

  /** isStaged for many buckets of one transaction: two reads, then no statement per bucket. */
  stagedTest(): (bucket: number) => boolean {
    const through = (this.s.stagedThroughGet.get() as { bucket: number | bigint }).bucket;
    const staging = new Set(
      (this.s.stagingBuckets.all() as { bucket: number }[]).map((r) => r.bucket),
    );
    return (bucket) => bucket <= through || staging.has(bucket);
  }

  /**
   * Writes the counter changes gathered in this transaction. A few buckets get a statement
   * each; more (a bulk batch's jobs are spread over the future's buckets: a batch of 1,000
   * from a 30-day backlog touched some 500) go in one statement of a JSON array, since a
   * statement's call, not the counter row, was most of its cost (19 us a job, bulk-cancel).
   */
  flush(d: CounterDeltas): void {
    const buckets = [...d.bucketDeltas()];
    if (buckets.length > FEW_BUCKETS) {
      const rows = buckets.map((b) => [b.bucket, b.tenant, b.delta]);
      const after = this.s.bucketCountsAddMany.all(JSON.stringify(rows)) as {
        bucket: number;
        tenant: string;
        pending: number;
      }[];
      for (const r of after) {
        if (r.pending <= 0) this.s.bucketCountDropEmpty.run(r.bucket, r.tenant);
      }
    } else {
      for (const b of buckets) {
        this.s.bucketCountAdd.run(b.bucket, b.tenant, b.delta);
        if (b.delta < 0) this.s.bucketCountDropEmpty.run(b.bucket, b.tenant);
      }
    }
    for (const st of d.statusDeltas()) this.s.statusCountAdd.run(st.tenant, st.status, st.delta);
  }
}

/** Up to this many bucket counters a transaction writes one statement each (see flush). */
const FEW_BUCKETS = 4;

function isFull(err: unknown): boolean {
  return (err as { code?: unknown }).code === "SQLITE_FULL";
}
