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
   * A batch of a filter with tags (walkedTag) whose cursor is a bare job id (an operation
   * started before migration 13, which walks to its end in the order it began): at most
   * @limit entries of the tag's primary key range (tenant, tag, job_id) after @afterId, each
   * entry's job by its seq (rowid), as statements.ts tagPage reads them, in
   * JOB_STATE_COLUMNS (raw).
   */
  operationStateByTag: `SELECT ${JOB_STATE_COLUMNS} ${TAG_PAGE_FROM}`,
  /**
   * A batch of a filter with tags in the walk's order (migration 13): at most @limit entries
   * of index job_tags_walk (tenant, tag, walk_bucket, job_id, seq) after (@afterBucket,
   * @afterId), each entry's job by its seq (rowid), in JOB_STATE_COLUMNS (raw) with the
   * entry's walk_bucket last (the cursor). The jobs of a batch were due close together when
   * tagged, so the outcome rows a cancel writes share pages of finished_due, and its
   * look-ups of finished_due read those same pages.
   */
  operationStateByTagWalk: `SELECT ${JOB_STATE_COLUMNS}, t.walk_bucket FROM (
      SELECT walk_bucket, job_id, seq FROM job_tags INDEXED BY job_tags_walk
      WHERE tenant = @tenant AND tag = @tag AND (walk_bucket, job_id) > (@afterBucket, @afterId)
      ORDER BY walk_bucket, job_id LIMIT @limit
    ) t
    CROSS JOIN jobs j ON j.seq = t.seq
    LEFT JOIN claims c ON c.id = j.id
    LEFT JOIN finished f ON f.due_at = j.due_at AND f.id = j.id
    ORDER BY t.walk_bucket, t.job_id`,
  /** An erased job's outcome (unique index finished_due). */
  finishedDeleteByJob: `DELETE FROM finished WHERE due_at = ? AND id = ?`,
  /**
   * An erased job's feed rows (feed.ts feedDrop): those written outside a tag walk (partial
   * index changes_job), and those a tag walk wrote at one walk_bucket (changes_walk).
   */
  changesDeleteByJob: `DELETE FROM changes
    WHERE job_id = ? AND walk_bucket IS NULL AND tenant = ?`,
  changesDeleteByJobWalk: `DELETE FROM changes
    WHERE walk_bucket = ? AND job_id = ? AND tenant = ?`,
  /** The walk_bucket of a job's entry of a tag (primary key). */
  tagWalkBucket: `SELECT walk_bucket FROM job_tags WHERE tenant = ? AND tag = ? AND job_id = ?`,
};
