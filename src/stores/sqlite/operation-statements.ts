/**
 * The SQLite statements of bulk operations (see operations.ts), merged into statements.ts's
 * SQL: the records, one row of `operations` each (primary key id, a ULID: rows append in
 * creation order), and the batches' reads of the jobs they walk.
 */
import { OPERATION_COLUMNS } from "../../store/operation-row.js";
import { JOB_STATE_COLUMNS, TAG_PAGE_FROM } from "./job-sql.js";

const COLUMNS = OPERATION_COLUMNS.join(", ");
const PLACEHOLDERS = OPERATION_COLUMNS.map((c) => `@${c}`).join(", ");
const ASSIGN = OPERATION_COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = @${c}`)
  .join(", ");

export const OPERATION_SQL = {
  operationInsert: `INSERT INTO operations (${COLUMNS}) VALUES (${PLACEHOLDERS})`,
  /** Primary key. */
  operationById: `SELECT ${COLUMNS} FROM operations WHERE id = ?`,
  /** Unique index operations_key (keyed records only). */
  operationByKey: `SELECT ${COLUMNS} FROM operations WHERE tenant = ? AND key = ?`,
  /** Writes every column of a record read in the same transaction (primary key). */
  operationWrite: `UPDATE operations SET ${ASSIGN} WHERE id = @id`,
  /**
   * Newest first before @before: the primary key backwards, or operations_tenant with a
   * tenant; states (a JSON array, or NULL for all) are checked per row.
   */
  operationsPage: `SELECT ${COLUMNS} FROM operations
    WHERE id < @before AND (@tenant IS NULL OR tenant = @tenant)
      AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
    ORDER BY id DESC LIMIT @limit`,

  /**
   * A batch of a filter without tags: one tenant's jobs after a seq, in seq order (the rowid: a
   * job's seq never changes, so a batch never meets a job it met before). Reads the rowid
   * B-tree from the cursor, other tenants' rows included. Rows of JOB_STATE_COLUMNS (raw).
   */
  operationStateBySeq: `SELECT ${JOB_STATE_COLUMNS} FROM jobs j
    LEFT JOIN claims c ON c.id = j.id
    LEFT JOIN finished f ON f.due_at = j.due_at AND f.id = j.id
    WHERE j.seq > ? AND j.tenant = ? ORDER BY j.seq LIMIT ?`,
  /**
   * A batch of a filter with tags (walkedTag): at most @limit entries of the tag's primary key
   * range (tenant, tag, job_id) after @afterId, each entry's job by its seq (rowid), as
   * statements.ts tagPage reads them, in JOB_STATE_COLUMNS (raw).
   */
  operationStateByTag: `SELECT ${JOB_STATE_COLUMNS} ${TAG_PAGE_FROM}`,
  /**
   * A cancel walked by bucket (operation-walk.ts): where the tag's next `@limit` entries after
   * @afterId end (primary key range, in job id order), and how many there are.
   */
  operationWalkChunkEnd: `SELECT max(job_id) AS last, count(*) AS n FROM (
      SELECT job_id FROM job_tags WHERE tenant = @tenant AND tag = @tag AND job_id > @afterId
      ORDER BY job_id LIMIT @limit
    )`,
  /**
   * Those entries copied into operation_walk with each job's bucket (its row by seq, rowid:
   * consecutive ids, consecutive rows), sorted first so each bucket's run is appended to.
   */
  operationWalkPlan: `INSERT INTO operation_walk (op_id, bucket, job_id, seq)
    SELECT @op, j.bucket, t.job_id, t.seq FROM job_tags t CROSS JOIN jobs j ON j.seq = t.seq
    WHERE t.tenant = @tenant AND t.tag = @tag AND t.job_id > @afterId AND t.job_id <= @upTo
    ORDER BY j.bucket, t.job_id`,
  /**
   * The walk's next entries (primary key prefix, in (bucket, job id) order), each with its
   * job by seq (rowid) in JOB_STATE_COLUMNS (raw), then the entry's bucket and job id: a job
   * gone since it was planned comes back as nulls but those two (passed over).
   */
  operationStateByWalk: `SELECT ${JOB_STATE_COLUMNS}, w.bucket, w.job_id FROM (
      SELECT bucket, job_id, seq FROM operation_walk WHERE op_id = @op
      ORDER BY bucket, job_id LIMIT @limit
    ) w
    LEFT JOIN jobs j ON j.seq = w.seq
    LEFT JOIN claims c ON c.id = j.id
    LEFT JOIN finished f ON f.due_at = j.due_at AND f.id = j.id
    ORDER BY w.bucket, w.job_id`,
  /** The walked prefix, through the last entry a batch read. */
  operationWalkDelete: `DELETE FROM operation_walk WHERE op_id = @op
    AND (bucket, job_id) <= (@bucket, @jobId)`,
  /** What a cancelled operation had planned and not walked (at most a chunk). */
  operationWalkDrop: `DELETE FROM operation_walk WHERE op_id = ?`,
  /** An erased job's outcome (unique index finished_due). */
  finishedDeleteByJob: `DELETE FROM finished WHERE due_at = ? AND id = ?`,
  /**
   * An erased job's feed rows (feed.ts feedDrop): those written outside a cancel's walk
   * (partial index changes_job), and those a walked cancel wrote at the job's bucket
   * (changes_walk).
   */
  changesDeleteByJob: `DELETE FROM changes
    WHERE job_id = ? AND walk_bucket IS NULL AND tenant = ?`,
  changesDeleteByJobWalk: `DELETE FROM changes
    WHERE walk_bucket = ? AND job_id = ? AND tenant = ?`,
};
