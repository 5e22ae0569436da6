/**
 * Every SQL statement of the SQLite store, one per operation, with what it relies on.
 * Named parameters (`@name`) are bound from plain objects by better-sqlite3.
 */
import { JOB_COLUMN_NAMES } from "./rows.js";

const JOB_COLUMNS = JOB_COLUMN_NAMES.join(", ");

export const SQL = {
  metaGet: `SELECT value FROM meta WHERE name = ?`,
  metaSet: `INSERT INTO meta (name, value) VALUES (?, ?)
    ON CONFLICT (name) DO UPDATE SET value = excluded.value`,

  /**
   * Appends: seq is the next rowid; id is a monotonic ULID so its unique index appends too.
   * Positional parameters: binding is measurably cheaper than named ones on the bulk path.
   */
  jobInsert: `INSERT INTO jobs (id, tenant, key, status, due_at, bucket, shard, payload, target,
      target_options, max_attempts, expire_after_ms, created_at, updated_at)
    VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,

  /** Unique index jobs_live_key (partial: live jobs with a key). */
  jobByLiveKey: `SELECT ${JOB_COLUMNS} FROM jobs
    WHERE tenant = ? AND key = ? AND key IS NOT NULL AND finished_at IS NULL`,

  /** Unique index on id. */
  jobById: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`,

  /** Primary key of bucket_staging: is this bucket (being) copied into hot? */
  stagingGet: `SELECT cursor, done FROM bucket_staging WHERE bucket = ?`,
  stagingSet: `INSERT INTO bucket_staging (bucket, cursor, done) VALUES (?, ?, ?)
    ON CONFLICT (bucket) DO UPDATE SET cursor = excluded.cursor, done = excluded.done`,
  /**
   * Marks an empty bucket as staged so later writes into it go straight to hot. Atomic with
   * the emptiness check, so a concurrent insert is either counted (and staged next pass) or
   * sees the mark.
   */
  stagingMarkEmpty: `INSERT OR IGNORE INTO bucket_staging (bucket, cursor, done)
    SELECT @b, 0, 1 WHERE NOT EXISTS (SELECT 1 FROM bucket_counts WHERE bucket = @b AND pending > 0)`,
  /** Forget staging of long-past buckets that hold no pending work (keeps the table tiny). */
  stagingPrune: `DELETE FROM bucket_staging
    WHERE done = 1 AND bucket < ?
      AND NOT EXISTS (SELECT 1 FROM bucket_counts c WHERE c.bucket = bucket_staging.bucket)`,

  /** Hot index: primary key (due_at, seq). OR IGNORE: staging and a direct write may race. */
  hotInsert: `INSERT OR IGNORE INTO hot (due_at, seq) VALUES (?, ?)`,
  hotDelete: `DELETE FROM hot WHERE due_at = ? AND seq = ?`,
  /** Range read of the due prefix of the hot primary key: cost tracks the due rows only. */
  hotDuePrefix: `SELECT due_at, seq FROM hot WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`,
  /** Deletes exactly the prefix just read: a range delete on the primary key. */
  hotDeletePrefix: `DELETE FROM hot WHERE (due_at, seq) <= (?, ?)`,
  /** First entry of the hot primary key. */
  hotEarliest: `SELECT min(due_at) AS due_at FROM hot`,

  /**
   * The claim: a conditional update from pending (the state it expects) to claimed, on the
   * rows whose seqs the hot prefix named. Bumps fence and attempts; RETURNING gives the rows.
   */
  jobsClaim: `UPDATE jobs SET status = 'claimed', lease_owner = @owner,
      lease_expires_at = @leaseUntil, fence = fence + 1, attempts = attempts + 1,
      version = version + 1, updated_at = @now
    WHERE seq IN (SELECT value FROM json_each(@seqs)) AND status = 'pending'
    RETURNING ${JOB_COLUMNS}`,

  /** Earliest bucket, at or before @until, holding pending work not yet fully staged. */
  stageNextBucket: `SELECT c.bucket AS bucket FROM bucket_counts c
    WHERE c.bucket <= ? AND c.pending > 0
      AND NOT EXISTS (SELECT 1 FROM bucket_staging s WHERE s.bucket = c.bucket AND s.done = 1)
    ORDER BY c.bucket LIMIT 1`,
  /** Index jobs_pending_bucket (bucket, seq): a sequential read inside one bucket. */
  stageRead: `SELECT due_at, seq FROM jobs
    WHERE bucket = ? AND status = 'pending' AND seq > ? ORDER BY seq LIMIT ?`,
  /** Earliest bucket with pending work that is not fully staged (for the watcher's sleep). */
  nextUnstagedBucket: `SELECT min(c.bucket) AS bucket FROM bucket_counts c
    WHERE c.pending > 0
      AND NOT EXISTS (SELECT 1 FROM bucket_staging s WHERE s.bucket = c.bucket AND s.done = 1)`,

  /** Settle a claim: applies only while the job is claimed under the same fencing token. */
  settleFinish: `UPDATE jobs SET status = @status, last_result = @result, last_error = COALESCE(@error, last_error),
      lease_owner = NULL, lease_expires_at = NULL, version = version + 1,
      updated_at = @now, fired_at = COALESCE(@firedAt, fired_at), finished_at = @now
    WHERE id = @id AND status = 'claimed' AND fence = @fence
    RETURNING seq, tenant, bucket, due_at`,
  /**
   * Settles a whole batch of successes in one statement: UPDATE ... FROM json_each, joined on
   * the id index, each row still conditional on claimed + its own fencing token. The unary +
   * keeps the planner off jobs_claimed_lease, which would make json_each the inner loop.
   */
  settleSucceededMany: `UPDATE jobs SET status = 'succeeded', last_result = s.result,
      lease_owner = NULL, lease_expires_at = NULL, version = version + 1,
      updated_at = @now, fired_at = s.fired_at, finished_at = @now
    FROM (SELECT value ->> '$.i' AS id, value ->> '$.f' AS fence, value ->> '$.r' AS result,
            value ->> '$.t' AS fired_at
          FROM json_each(@batch)) AS s
    WHERE jobs.id = s.id AND +jobs.status = 'claimed' AND jobs.fence = s.fence
    RETURNING jobs.id AS id, jobs.tenant AS tenant`,
  settleRetry: `UPDATE jobs SET status = 'pending', due_at = @retryAt, bucket = @bucket,
      last_error = @error, lease_owner = NULL, lease_expires_at = NULL,
      version = version + 1, updated_at = @now, fired_at = @firedAt
    WHERE id = @id AND status = 'claimed' AND fence = @fence
    RETURNING seq, tenant, bucket, due_at`,

  /** Release an unstarted claim: back to pending, the attempt given back. */
  settleRelease: `UPDATE jobs SET status = 'pending', attempts = attempts - 1,
      lease_owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = @now
    WHERE id = @id AND status = 'claimed' AND fence = @fence
    RETURNING seq, tenant, bucket, due_at`,

  /** Cancel: conditional on pending. */
  jobCancel: `UPDATE jobs SET status = 'cancelled', version = version + 1,
      updated_at = @now, finished_at = @now
    WHERE id = @id AND status = 'pending'
    RETURNING ${JOB_COLUMNS}`,
  /** Reschedule: conditional on pending (and on the version when one is expected). */
  jobReschedule: `UPDATE jobs SET due_at = @dueAt, bucket = @bucket, version = version + 1,
      updated_at = @now
    WHERE id = @id AND status = 'pending' AND (@expectedVersion IS NULL OR version = @expectedVersion)
    RETURNING ${JOB_COLUMNS}`,
  /** Retry a dead job: conditional on dead. */
  jobRetry: `UPDATE jobs SET status = 'pending', due_at = @dueAt, bucket = @bucket,
      attempts = 0, version = version + 1, updated_at = @now, finished_at = NULL,
      lease_owner = NULL, lease_expires_at = NULL
    WHERE id = @id AND status = 'dead' AND (@expectedVersion IS NULL OR version = @expectedVersion)
    RETURNING ${JOB_COLUMNS}`,

  /** Index jobs_claimed_lease: expired leases, oldest first. */
  leasesExpired: `SELECT id, fence, attempts, max_attempts FROM jobs
    WHERE status = 'claimed' AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT ?`,
  leaseRequeue: `UPDATE jobs SET status = 'pending', lease_owner = NULL,
      lease_expires_at = NULL, last_error = @error, version = version + 1, updated_at = @now
    WHERE id = @id AND status = 'claimed' AND fence = @fence
    RETURNING seq, tenant, bucket, due_at`,

  bucketCountAdd: `INSERT INTO bucket_counts (bucket, tenant, pending) VALUES (?, ?, ?)
    ON CONFLICT (bucket, tenant) DO UPDATE SET pending = pending + excluded.pending`,
  bucketCountDropEmpty: `DELETE FROM bucket_counts WHERE bucket = ? AND tenant = ? AND pending <= 0`,
  bucketCountsRange: `SELECT bucket, sum(pending) AS pending FROM bucket_counts
    WHERE bucket >= ? AND bucket < ? GROUP BY bucket ORDER BY bucket`,
  bucketCountsRangeTenant: `SELECT bucket, pending FROM bucket_counts
    WHERE bucket >= ? AND bucket < ? AND tenant = ? ORDER BY bucket`,
  statusCountAdd: `INSERT INTO status_counts (tenant, status, n) VALUES (?, ?, ?)
    ON CONFLICT (tenant, status) DO UPDATE SET n = n + excluded.n`,
  statusCounts: `SELECT status, sum(n) AS n FROM status_counts GROUP BY status`,
  statusCountsTenant: `SELECT status, n FROM status_counts WHERE tenant = ?`,

  /** Index jobs_finished_at: the oldest finished rows first. */
  historyOldest: `SELECT seq, tenant, status FROM jobs
    WHERE finished_at IS NOT NULL AND finished_at < ? ORDER BY finished_at LIMIT ?`,
  jobDeleteBySeq: `DELETE FROM jobs WHERE seq = ?`,

  /** Listing: pending jobs of one bucket after a (due_at, id) position (index jobs_pending_bucket). */
  listPendingInBucket: `SELECT ${JOB_COLUMNS} FROM jobs
    WHERE bucket = @bucket AND status = 'pending' AND (due_at, id) > (@afterDue, @afterId)
      AND due_at >= @from AND due_at < @to AND (@tenant IS NULL OR tenant = @tenant)
    ORDER BY due_at, id LIMIT @limit`,
  /** Buckets that may hold pending rows of a listing, from the counters. */
  listBuckets: `SELECT DISTINCT bucket FROM bucket_counts
    WHERE bucket >= @fromBucket AND bucket < @to AND pending > 0
      AND (@tenant IS NULL OR tenant = @tenant)
    ORDER BY bucket`,
  /** Claimed jobs are few (bounded by in-flight work): index jobs_claimed_lease, then sort. */
  listClaimed: `SELECT ${JOB_COLUMNS} FROM jobs
    WHERE status = 'claimed' AND (due_at, id) > (@afterDue, @afterId)
      AND due_at >= @from AND due_at < @to AND (@tenant IS NULL OR tenant = @tenant)
    ORDER BY due_at, id LIMIT @limit`,
  /** Finished jobs by due time: index jobs_finished_due. */
  listFinished: `SELECT ${JOB_COLUMNS} FROM jobs
    WHERE finished_at IS NOT NULL AND (due_at, id) > (@afterDue, @afterId)
      AND due_at >= @from AND due_at < @to AND (@tenant IS NULL OR tenant = @tenant)
      AND status IN (SELECT value FROM json_each(@statuses))
    ORDER BY due_at, id LIMIT @limit`,
} as const;

/** Statements returning JOB_COLUMNS, run in raw mode (rows as arrays, see rows.ts). */
export const RAW_JOB_STATEMENTS: readonly (keyof typeof SQL)[] = [
  "jobByLiveKey",
  "jobById",
  "jobsClaim",
  "jobCancel",
  "jobReschedule",
  "jobRetry",
  "listPendingInBucket",
  "listClaimed",
  "listFinished",
];
