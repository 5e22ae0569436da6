/**
 * The SQL that joins a job's state back into one row (see statements.ts): a job lives in
 * `jobs` (its definition), `claims` (while claimed) and `finished` (once finished), with the
 * aliases j, c and f. Shared by statements.ts and the bulk statements (operation-statements.ts).
 */
import { JOB_COLUMN_NAMES, JOB_STATE_COLUMN_NAMES } from "./rows.js";

export const JOB_EXPRESSIONS: Record<(typeof JOB_COLUMN_NAMES)[number], string> = {
  seq: "j.seq",
  id: "j.id",
  tenant: "j.tenant",
  key: "j.key",
  status:
    "CASE WHEN f.rid IS NOT NULL THEN f.status WHEN c.id IS NOT NULL THEN 'claimed' ELSE 'pending' END",
  due_at: "j.due_at",
  bucket: "j.bucket",
  shard: "j.shard",
  payload: "j.payload",
  target: "j.target",
  target_options: "j.target_options",
  attempts: "coalesce(f.attempts, c.attempts, j.attempts)",
  max_attempts: "j.max_attempts",
  expire_after_ms: "j.expire_after_ms",
  version: "coalesce(f.version, c.version, j.version)",
  lease_owner: "c.owner",
  lease_expires_at: "c.lease_expires_at",
  fence: "coalesce(f.fence, c.fence, j.fence)",
  last_error: "CASE WHEN f.rid IS NOT NULL THEN f.last_error ELSE j.last_error END",
  last_result: "f.last_result",
  created_at: "j.created_at",
  updated_at: "coalesce(f.finished_at, c.claimed_at, j.updated_at)",
  fired_at: "CASE WHEN f.rid IS NOT NULL THEN f.fired_at ELSE j.fired_at END",
  finished_at: "f.finished_at",
  trace_context: "j.trace_context",
  schedule_id: "j.schedule_id",
  nominal: "j.nominal",
  tags: "j.tags",
  paused_by: "(SELECT hd.pause_id FROM held hd WHERE hd.seq = j.seq)",
  callbacks: "j.callbacks",
  callback_of: "j.callback_of",
};

export const JOB_COLUMNS = JOB_COLUMN_NAMES.map((name) => JOB_EXPRESSIONS[name]).join(", ");
/** Full job rows, driven from `jobs`. */
export const JOB_SELECT = `SELECT ${JOB_COLUMNS} FROM jobs j
  LEFT JOIN claims c ON c.id = j.id
  LEFT JOIN finished f ON f.due_at = j.due_at AND f.id = j.id`;
/** The columns of JOB_STATE_COLUMN_NAMES (a StoredState, rows.ts rowToState), same joins. */
export const JOB_STATE_COLUMNS = JOB_STATE_COLUMN_NAMES.map((name) => JOB_EXPRESSIONS[name]).join(
  ", ",
);
/**
 * At most @limit entries of a tag's primary key range (tenant, tag, job_id) after @afterId,
 * each entry's job by its seq (rowid) with its claim and outcome, in job id order: the FROM
 * of a tag page (statements.ts tagPage) and of a tag-filtered bulk batch.
 */
export const TAG_PAGE_FROM = `FROM (
      SELECT job_id, seq FROM job_tags
      WHERE tenant = @tenant AND tag = @tag AND job_id > @afterId
      ORDER BY job_id LIMIT @limit
    ) t
    CROSS JOIN jobs j ON j.seq = t.seq
    LEFT JOIN claims c ON c.id = j.id
    LEFT JOIN finished f ON f.due_at = j.due_at AND f.id = j.id
    ORDER BY t.job_id`;
