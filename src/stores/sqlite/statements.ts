/**
 * Every SQL statement of the SQLite store, one per operation, with what it relies on.
 * Named parameters (`@name`) are bound from plain objects by better-sqlite3.
 *
 * A job's state is spread over three tables (see migrations.ts): `jobs` (its definition,
 * written at insert and on rare changes), `claims` (while claimed) and `finished` (once
 * finished). JOB_SELECT joins them back into one row in JOB_COLUMN_NAMES order, with the
 * aliases j, c and f; statements add their own WHERE clause.
 */
import type Database from "better-sqlite3";
import { JOB_COLUMN_NAMES } from "./rows.js";
import { JOB_COLUMNS, JOB_EXPRESSIONS, JOB_SELECT, TAG_PAGE_FROM } from "./job-sql.js";
import { INSERT_SQL } from "./insert-statements.js";
import { OPERATION_SQL } from "./operation-statements.js";
import { PAUSE_SQL } from "./pause-statements.js";
import { SERIES_SQL } from "./series-statements.js";

/** The staged-through mark (see bucketIsStaged), or the smallest integer when unset. */
const STAGED_THROUGH = `coalesce((SELECT CAST(value AS INTEGER) FROM meta
    WHERE name = 'staged_through'), -9223372036854775808)`;
/** A pending job's row needs no claim or outcome columns: plain columns of jobs. */
const PENDING_COLUMNS = JOB_COLUMN_NAMES.map((name) => {
  if (name === "status") return "'pending'";
  // paused_by: the claim reads only jobs no pause holds (claimRead).
  if (
    ["lease_owner", "lease_expires_at", "last_result", "finished_at", "paused_by"].includes(name)
  ) {
    return "NULL";
  }
  return `j.${name}`;
}).join(", ");
/** A job is pending when it has neither a claim nor an outcome. */
const IS_PENDING = `NOT EXISTS (SELECT 1 FROM claims c2 WHERE c2.id = j.id)
  AND NOT EXISTS (SELECT 1 FROM finished f2 WHERE f2.due_at = j.due_at AND f2.id = j.id)`;

export const SQL = {
  metaGet: `SELECT value FROM meta WHERE name = ?`,

  /**
   * The same transition of many jobs (a bulk batch; @entries a JSON array of [seq,
   * walk_bucket] pairs, the walk_bucket null but in a tag walk, see migration 13), from their
   * rows in one statement, in the array's order: no JSON row is built per change.
   */
  changesInsertFromJobs: `INSERT INTO changes (tenant, job_id, kind, status, due_at, attempts,
      error, at, walk_bucket)
    SELECT j.tenant, j.id, @kind, @status, j.due_at, j.attempts, NULL, @at, e.value ->> 1
    FROM json_each(@entries) e CROSS JOIN jobs j ON j.seq = e.value ->> 0 ORDER BY e.key`,
  /** The same for the jobs after a seq (just inserted: a rowid range), in seq order; no walk_bucket. */
  changesInsertFromJobsAfter: `INSERT INTO changes (tenant, job_id, kind, status, due_at,
      attempts, error, at)
    SELECT tenant, id, @kind, @status, due_at, attempts, NULL, @at
    FROM jobs WHERE seq > @after ORDER BY seq`,
  /** The highest seq ever given (AUTOINCREMENT's own record; 0 before the first change). */
  changesHead: `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'changes'), 0) AS seq`,
  /** A page after a position, up to the head read before it (primary key range). */
  changesAfter: `SELECT seq, tenant, job_id, kind, status, due_at, attempts, error, at
    FROM changes WHERE seq > @after AND seq <= @upTo ORDER BY seq LIMIT @limit`,
  /** One tenant's page (index changes_tenant). */
  changesAfterTenant: `SELECT seq, tenant, job_id, kind, status, due_at, attempts, error, at
    FROM changes WHERE tenant = @tenant AND seq > @after AND seq <= @upTo
    ORDER BY seq LIMIT @limit`,
  /** Retention's read of the oldest rows, in feed order. */
  changesOldest: `SELECT seq, at FROM changes ORDER BY seq LIMIT ?`,
  changesDeleteThrough: `DELETE FROM changes WHERE seq <= ?`,
  metaSet: `INSERT INTO meta (name, value) VALUES (?, ?)
    ON CONFLICT (name) DO UPDATE SET value = excluded.value`,

  /** live_keys primary key, then the holder's row: live while it has no outcome. */
  jobByLiveKey: `${JOB_SELECT}
    WHERE j.seq = (SELECT seq FROM live_keys WHERE tenant = ? AND key = ?) AND f.rid IS NULL`,
  /** The key now belongs to `seq` (a new job, or a dead one retried). */
  liveKeySet: `INSERT INTO live_keys (tenant, key, seq) VALUES (?, ?, ?)
    ON CONFLICT (tenant, key) DO UPDATE SET seq = excluded.seq`,
  /** Retention: forget a key whose latest holder is being deleted. */
  liveKeyDelete: `DELETE FROM live_keys WHERE tenant = ? AND key = ? AND seq = ?`,

  /** Unique index on id. */
  jobById: `${JOB_SELECT} WHERE j.id = ?`,
  /** Primary key. */
  jobBySeq: `${JOB_SELECT} WHERE j.seq = ?`,

  /** Primary key of bucket_staging: how far this bucket has been copied into hot. */
  stagingGet: `SELECT cursor, done FROM bucket_staging WHERE bucket = ?`,
  /**
   * Is this bucket staged (or being staged)? Yes when it is at or before the staged-through
   * mark (every bucket up to it has been copied into hot, oldest first) or has a staging
   * row. A job that becomes pending in such a bucket goes into hot directly.
   */
  bucketIsStaged: `SELECT 1 AS staged WHERE @bucket <= ${STAGED_THROUGH}
    OR EXISTS (SELECT 1 FROM bucket_staging WHERE bucket = @bucket)`,
  /** What bucketIsStaged reads, for many buckets at once: the mark, and the staging rows. */
  stagedThroughGet: `SELECT ${STAGED_THROUGH} AS bucket`,
  stagingBuckets: `SELECT bucket FROM bucket_staging`,
  /** Raises the staged-through mark (never lowers it). */
  stagedThroughRaise: `INSERT INTO meta (name, value) VALUES ('staged_through', CAST(@bucket AS TEXT))
    ON CONFLICT (name) DO UPDATE SET value = excluded.value
    WHERE CAST(meta.value AS INTEGER) < CAST(excluded.value AS INTEGER)`,
  stagingSet: `INSERT INTO bucket_staging (bucket, cursor, done) VALUES (?, ?, ?)
    ON CONFLICT (bucket) DO UPDATE SET cursor = excluded.cursor, done = excluded.done`,
  /** Forget staging rows the staged-through mark covers (keeps the table tiny). */
  stagingPrune: `DELETE FROM bucket_staging WHERE done = 1 AND bucket <= ${STAGED_THROUGH}`,

  /** Hot index: primary key (due_at, seq). OR IGNORE: staging and a direct write may race. */
  hotInsert: `INSERT OR IGNORE INTO hot (due_at, seq, tenant) VALUES (?, ?, ?)`,
  hotDelete: `DELETE FROM hot WHERE due_at = @dueAt AND seq = @seq`,
  /** The same for a JSON array of [due_at, seq] pairs: a primary key probe each, one statement. */
  hotDeleteMany: `DELETE FROM hot WHERE (due_at, seq) IN
    (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
  /** Range read of the due prefix of the hot primary key: cost tracks the due rows only. */
  hotDuePrefix: `SELECT due_at, seq FROM hot WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`,
  /** Deletes exactly the prefix just read: a range delete on the primary key. */
  hotDeletePrefix: `DELETE FROM hot WHERE (due_at, seq) <= (?, ?)`,
  /**
   * Tenants that may have due work, for a claim shared out per tenant: the pending counters of
   * the buckets up to the claim's (primary key of bucket_counts, a row per bucket and tenant:
   * as many as tenants with work in the current and any overdue bucket, never per job), after
   * a rotating cursor so every tenant gets its turn when there are more than a batch.
   */
  dueTenantsAfter: `SELECT DISTINCT tenant FROM bucket_counts
    WHERE bucket <= @bucket AND pending > 0 AND tenant > @after
    ORDER BY tenant LIMIT @limit`,
  /** One tenant's due prefix: index hot_tenant (tenant, due_at, seq), a range read. */
  hotTenantDuePrefix: `SELECT due_at, seq FROM hot INDEXED BY hot_tenant
    WHERE tenant = @tenant AND due_at <= @dueBefore ORDER BY due_at, seq LIMIT @limit`,
  /** Deletes exactly the tenant prefix just read (a range of hot_tenant). */
  hotTenantDeletePrefix: `DELETE FROM hot INDEXED BY hot_tenant
    WHERE tenant = @tenant AND (due_at, seq) <= (@dueAt, @seq)`,
  /** First entry of the hot primary key. */
  hotEarliest: `SELECT min(due_at) AS due_at FROM hot`,
  /**
   * The due prefix of the hot index restricted to the shards in @shards (a JSON array): the
   * hot primary key in order (the LEFT JOIN keeps hot as the outer loop, so the ORDER BY
   * costs nothing and the read stops at @limit), each entry's job found by its seq. Entries
   * of other shards are stepped over, so the cost is the due entries read, those of other
   * shards included. An entry whose job row is gone (purged) counts as ours, so it is
   * dropped by whichever shard set claims next.
   */
  hotDuePrefixOfShards: `SELECT h.due_at, h.seq FROM hot h LEFT JOIN jobs j ON j.seq = h.seq
    WHERE h.due_at <= @dueBefore
      AND (j.seq IS NULL OR j.shard IN (SELECT value FROM json_each(@shards)))
    ORDER BY h.due_at, h.seq LIMIT @limit`,
  /** One tenant's due prefix of the shards in @shards: hot_tenant in order, as above. */
  hotTenantDuePrefixOfShards: `SELECT h.due_at, h.seq FROM hot h INDEXED BY hot_tenant
      LEFT JOIN jobs j ON j.seq = h.seq
    WHERE h.tenant = @tenant AND h.due_at <= @dueBefore
      AND (j.seq IS NULL OR j.shard IN (SELECT value FROM json_each(@shards)))
    ORDER BY h.due_at, h.seq LIMIT @limit`,
  /** The first hot entry of a job of the shards in @shards (the same walk as above). */
  hotEarliestOfShards: `SELECT h.due_at AS due_at FROM hot h CROSS JOIN jobs j ON j.seq = h.seq
    WHERE j.shard IN (SELECT value FROM json_each(@shards))
    ORDER BY h.due_at LIMIT 1`,

  /**
   * The claim, read side: the jobs the hot entries name ([due_at, seq] pairs), each still
   * pending and still due when its entry says (an entry left behind by a job that has since
   * moved, been retried or finished is dropped), and not held by a pause (primary key of
   * held). Reads only: the jobs rows are not written.
   */
  claimRead: `SELECT ${PENDING_COLUMNS} FROM json_each(@entries) e
    CROSS JOIN jobs j ON j.seq = e.value ->> 1 AND j.due_at = e.value ->> 0
    WHERE ${IS_PENDING} AND NOT EXISTS (SELECT 1 FROM held h WHERE h.seq = j.seq)`,
  /**
   * The claim, write side: a lease row per job just read, with the next fencing token,
   * attempt and version. Appends to a table as small as the work in flight.
   */
  claimInsert: `INSERT INTO claims (id, seq, due_at, bucket, tenant, owner, lease_expires_at,
      fence, attempts, version, last_error, fired_at, claimed_at)
    SELECT j.id, j.seq, j.due_at, j.bucket, j.tenant, @owner, @leaseUntil, j.fence + 1,
      j.attempts + 1, j.version + 1, j.last_error, j.fired_at, @now
    FROM jobs j WHERE j.seq IN (SELECT value FROM json_each(@seqs))`,

  /** Earliest bucket, at or before @until, holding pending work not yet fully staged. */
  stageNextBucket: `SELECT c.bucket AS bucket FROM bucket_counts c
    WHERE c.bucket <= ? AND c.bucket > ${STAGED_THROUGH} AND c.pending > 0
      AND NOT EXISTS (SELECT 1 FROM bucket_staging s WHERE s.bucket = c.bucket AND s.done = 1)
    ORDER BY c.bucket LIMIT 1`,
  /**
   * Where a staging chunk of @budget rows ends inside one bucket (index jobs_bucket, which
   * holds (bucket, seq): read without touching the rows). None: the rest of the bucket fits.
   */
  stageChunkEnd: `SELECT seq FROM jobs INDEXED BY jobs_bucket WHERE bucket = @bucket AND seq > @after
    ORDER BY seq LIMIT 1 OFFSET @budget - 1`,
  /**
   * Copies one chunk of a bucket into hot in one statement, from the index alone (it holds
   * (bucket, seq, due_at, tenant)): no row is read. A job of the chunk that is no longer pending
   * (cancelled before its bucket came due, say) is copied too and dropped by the claim
   * (claimRead), which checks every row it takes. A job a pause holds stays out (a probe of
   * held's primary key, an empty table but for pauses).
   */
  stageCopy: `INSERT OR IGNORE INTO hot (due_at, seq, tenant)
    SELECT due_at, seq, tenant FROM jobs INDEXED BY jobs_bucket
    WHERE bucket = @bucket AND seq > @after AND seq <= @upTo
      AND NOT EXISTS (SELECT 1 FROM held h WHERE h.seq = jobs.seq)`,
  /** Earliest bucket with pending work that is not fully staged (for the watcher's sleep). */
  nextUnstagedBucket: `SELECT min(c.bucket) AS bucket FROM bucket_counts c
    WHERE c.pending > 0 AND c.bucket > ${STAGED_THROUGH}
      AND NOT EXISTS (SELECT 1 FROM bucket_staging s WHERE s.bucket = c.bucket AND s.done = 1)`,

  /** The claim a settlement names: by id, only while claimed under the same fencing token. */
  claimOf: `SELECT seq, id, tenant, due_at, bucket, last_error, fired_at, attempts, fence, version
    FROM claims WHERE id = ? AND fence = ?`,
  claimDelete: `DELETE FROM claims WHERE id = ?`,
  /**
   * Settles a whole batch of successes in one statement: the claims named by (id, fence)
   * become outcome rows (appended in due order), read from the claims alone. RETURNING says
   * which applied; their claims are deleted next.
   */
  settleSucceededMany: `INSERT INTO finished (seq, due_at, id, tenant, status, attempts, fence,
      version, last_error, last_result, fired_at, finished_at)
    SELECT c.seq, c.due_at, c.id, c.tenant, 'succeeded', c.attempts, c.fence, c.version + 1,
      c.last_error, s.result, s.fired_at, @now
    FROM (SELECT value ->> '$.i' AS id, value ->> '$.f' AS fence, value ->> '$.r' AS result,
            value ->> '$.t' AS fired_at
          FROM json_each(@batch)) AS s
      JOIN claims c ON c.id = s.id AND c.fence = s.fence
    RETURNING id, tenant, due_at, attempts`,
  claimsDeleteMany: `DELETE FROM claims WHERE id IN (SELECT value FROM json_each(?))`,
  /** An outcome row (dead, expired or cancelled) from values already checked. */
  finishedInsert: `INSERT INTO finished (seq, due_at, id, tenant, status, attempts, fence,
      version, last_error, last_result, fired_at, finished_at)
    VALUES (@seq, @dueAt, @id, @tenant, @status, @attempts, @fence, @version, @error, NULL,
      @firedAt, @now)`,
  /**
   * Cancels the pending jobs of @seqs (a JSON array) in one statement: an outcome row each,
   * from the jobs row (a pending job's attempts, token, version and last error are its row's),
   * inserted in finished_due order so neighbouring entries share their index pages.
   */
  finishedInsertCancelled: `INSERT INTO finished (seq, due_at, id, tenant, status, attempts,
      fence, version, last_error, last_result, fired_at, finished_at)
    SELECT j.seq, j.due_at, j.id, j.tenant, 'cancelled', j.attempts, j.fence, j.version + 1,
      j.last_error, NULL, j.fired_at, @now
    FROM json_each(@seqs) e CROSS JOIN jobs j ON j.seq = e.value
    ORDER BY j.due_at, j.id`,
  /**
   * A claim that ends without an outcome (retry, release, lease expiry) writes its attempt,
   * token and version back into the jobs row (tokens stay monotonic), with the new due time.
   */
  jobRequeue: `UPDATE jobs SET due_at = @dueAt, bucket = @bucket, attempts = @attempts,
      fence = @fence, version = @version, last_error = @error, fired_at = @firedAt,
      updated_at = @now
    WHERE seq = @seq`,

  /** Reschedule: the jobs row of a pending job (checked just before, in the same transaction). */
  jobReschedule: `UPDATE jobs SET due_at = @dueAt, bucket = @bucket, version = version + 1,
      updated_at = @now
    WHERE seq = @seq`,
  /**
   * A replacing schedule (keyMode replace/debounce): the pending row takes the new
   * definition and the replacing schedule's trace context; attempts, fence and last error
   * stay, as in a reschedule.
   */
  jobReplace: `UPDATE jobs SET due_at = @dueAt, bucket = @bucket, payload = @payload, target = @target,
      target_options = @targetOptions, max_attempts = @maxAttempts,
      expire_after_ms = @expireAfterMs, trace_context = @traceContext, tags = @tags,
      callbacks = @callbacks, version = version + 1, updated_at = @now
    WHERE seq = @seq`,
  /** Retry a dead job: its outcome row goes, the row takes the outcome's token and version. */
  finishedDelete: `DELETE FROM finished WHERE rid = ?`,
  deadOutcome: `SELECT f.rid AS rid, f.fence AS fence, f.version AS version,
      f.last_error AS last_error, f.fired_at AS fired_at
    FROM jobs j JOIN finished f ON f.due_at = j.due_at AND f.id = j.id
    WHERE j.seq = ? AND f.status = 'dead'`,
  jobRetry: `UPDATE jobs SET due_at = @dueAt, bucket = @bucket, attempts = 0, fence = @fence,
      version = @version, last_error = @error, fired_at = @firedAt, updated_at = @now
    WHERE seq = @seq`,

  /** Index claims_lease: expired leases, oldest first. */
  leasesExpired: `SELECT c.id AS id, c.fence AS fence, c.attempts AS attempts,
      j.max_attempts AS max_attempts, j.callbacks IS NOT NULL AS has_callbacks
    FROM claims c CROSS JOIN jobs j ON j.seq = c.seq
    WHERE c.lease_expires_at <= ? ORDER BY c.lease_expires_at LIMIT ?`,
  /** The earliest lease left (index claims_lease: one descent). */
  leasesNextExpiry: `SELECT min(lease_expires_at) AS at FROM claims`,
  /**
   * The lease heartbeat. `claims` holds only the jobs in flight (a few thousand rows at
   * most), so a scan filtered by owner is cheaper than keeping an owner index on every claim.
   */
  leasesRenew: `UPDATE claims SET lease_expires_at = @leaseUntil WHERE owner = @owner`,
  /**
   * Claims of this node's earlier incarnations whose renewals stopped (index claims_lease
   * bounds the read to leases expiring by then; the owner prefix is checked per row).
   */
  leasesStale: `SELECT c.id AS id, c.fence AS fence FROM claims c
    WHERE c.lease_expires_at <= @expiresBy
      AND substr(c.owner, 1, length(@prefix)) = @prefix AND c.owner <> @except
    ORDER BY c.lease_expires_at LIMIT @limit`,

  bucketCountAdd: `INSERT INTO bucket_counts (bucket, tenant, pending) VALUES (?, ?, ?)
    ON CONFLICT (bucket, tenant) DO UPDATE SET pending = pending + excluded.pending`,
  bucketCountDropEmpty: `DELETE FROM bucket_counts WHERE bucket = ? AND tenant = ? AND pending <= 0`,
  /**
   * The same two for a JSON array of [bucket, tenant, delta] (a batch touching many buckets:
   * one statement, not two per bucket). WHERE true: an upsert's SELECT needs a WHERE clause.
   */
  bucketCountsAddMany: `INSERT INTO bucket_counts (bucket, tenant, pending)
    SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?) WHERE true
    ON CONFLICT (bucket, tenant) DO UPDATE SET pending = pending + excluded.pending
    RETURNING bucket, tenant, pending`,
  bucketCountsRange: `SELECT bucket, sum(pending) AS pending FROM bucket_counts
    WHERE bucket >= ? AND bucket < ? GROUP BY bucket ORDER BY bucket`,
  bucketCountsRangeTenant: `SELECT bucket, pending FROM bucket_counts
    WHERE bucket >= ? AND bucket < ? AND tenant = ? ORDER BY bucket`,
  statusCountAdd: `INSERT INTO status_counts (tenant, status, n) VALUES (?, ?, ?)
    ON CONFLICT (tenant, status) DO UPDATE SET n = n + excluded.n`,
  statusCounts: `SELECT status, sum(n) AS n FROM status_counts GROUP BY status`,
  statusCountsTenant: `SELECT status, n FROM status_counts WHERE tenant = ?`,

  /**
   * The oldest finished jobs, in finish order (the rowid of finished), with what retention
   * must remove; the caller keeps those finished before its cutoff.
   */
  historyOldest: `SELECT f.rid AS rid, f.seq AS seq, f.tenant AS tenant, f.status AS status,
      f.finished_at AS finished_at, j.key AS key, j.id AS id, j.tags AS tags
    FROM finished f LEFT JOIN jobs j ON j.seq = f.seq
    ORDER BY f.rid LIMIT ?`,
  jobDeleteBySeq: `DELETE FROM jobs WHERE seq = ?`,

  /**
   * Listing: pending jobs of one bucket after a (due_at, id) position (index jobs_bucket,
   * then the bucket's rows sorted; claimed and finished ones skipped).
   */
  listPendingInBucket: `${JOB_SELECT}
    WHERE j.bucket = @bucket AND c.id IS NULL AND f.rid IS NULL
      AND (j.due_at, j.id) > (@afterDue, @afterId)
      AND j.due_at >= @from AND j.due_at < @to AND (@tenant IS NULL OR j.tenant = @tenant)
    ORDER BY j.due_at, j.id LIMIT @limit`,
  /** Buckets that may hold pending rows of a listing, from the counters. */
  listBuckets: `SELECT DISTINCT bucket FROM bucket_counts
    WHERE bucket >= @fromBucket AND bucket < @to AND pending > 0
      AND (@tenant IS NULL OR tenant = @tenant)
    ORDER BY bucket`,
  /**
   * Claimed jobs are few (bounded by in-flight work): every claim, then sort. CROSS JOIN
   * keeps claims as the outer loop (the planner would otherwise scan jobs).
   */
  listClaimed: `SELECT ${JOB_COLUMNS} FROM claims c
    CROSS JOIN jobs j ON j.seq = c.seq
    LEFT JOIN finished f ON f.due_at = j.due_at AND f.id = j.id
    WHERE (j.due_at, j.id) > (@afterDue, @afterId)
      AND j.due_at >= @from AND j.due_at < @to AND (@tenant IS NULL OR j.tenant = @tenant)
    ORDER BY j.due_at, j.id LIMIT @limit`,
  /** Finished jobs by due time: index finished_due, in order. */
  listFinished: `SELECT ${JOB_COLUMNS} FROM finished f
    CROSS JOIN jobs j ON j.seq = f.seq
    LEFT JOIN claims c ON c.id = j.id
    WHERE (f.due_at, f.id) > (@afterDue, @afterId)
      AND f.due_at >= @from AND f.due_at < @to AND (@tenant IS NULL OR f.tenant = @tenant)
      AND f.status IN (SELECT value FROM json_each(@statuses))
    ORDER BY f.due_at, f.id LIMIT @limit`,

  /** The tag index (job_tags, see migrations.ts): one entry per tag of a job. */
  tagInsert: `INSERT INTO job_tags (tenant, tag, job_id, seq, walk_bucket) VALUES (?, ?, ?, ?, ?)`,
  tagDelete: `DELETE FROM job_tags WHERE tenant = ? AND tag = ? AND job_id = ?`,
  /**
   * A page of a tag: at most @limit entries of the primary key range (tenant, tag, job_id)
   * after @afterId, each entry's job by its seq (rowid) with its claim and outcome. The
   * caller filters by status and due time, so the page's cursor is the last entry read.
   * A tag-filtered bulk operation reads the same (operation-statements.ts operationStateByTag).
   */
  tagPage: `SELECT ${JOB_COLUMNS} ${TAG_PAGE_FROM}`,
  /** A tag's matching jobs, counted over its entries (the same joins as tagPage). */
  tagCount: `SELECT count(*) AS n FROM job_tags t
    CROSS JOIN jobs j ON j.seq = t.seq
    LEFT JOIN claims c ON c.id = j.id
    LEFT JOIN finished f ON f.due_at = j.due_at AND f.id = j.id
    WHERE t.tenant = @tenant AND t.tag = @tag AND j.due_at >= @from AND j.due_at < @to
      AND (@statuses IS NULL OR ${JOB_EXPRESSIONS.status} IN (SELECT value FROM json_each(@statuses)))`,

  ...INSERT_SQL,
  ...SERIES_SQL,
  ...OPERATION_SQL,

  ...PAUSE_SQL,
} as const;

/**
 * Statements run in raw mode (rows as arrays): those returning JOB_COLUMNS (see rows.ts),
 * the hot prefix, whose [due_at, seq] rows go back to claimRead as they are, and the
 * claim's reads of its series (series-advance.ts GroupTuple, series-rows.ts StepTuple).
 */
export const RAW_JOB_STATEMENTS: readonly (keyof typeof SQL)[] = [
  "hotDuePrefix",
  "hotTenantDuePrefix",
  "hotDuePrefixOfShards",
  "hotTenantDuePrefixOfShards",
  "jobByLiveKey",
  "jobById",
  "operationStateBySeq",
  "operationStateByTag",
  "operationStateByTagWalk",
  "jobBySeq",
  "claimRead",
  "listPendingInBucket",
  "listClaimed",
  "listFinished",
  "tagPage",
  "seriesStepGroups",
  "seriesStepRows",
];

/** The prepared statements of a store, by name. */
export type Statements = Record<keyof typeof SQL, Database.Statement>;
