/**
 * The column lists the PostgreSQL store's statements share (statements.ts and the files of
 * statements beside it): every job table has COLS; a read names where the row is by the
 * status columns it adds.
 */

/** Columns every job table has (trace_context, schedule_id, nominal and tags were added later). */
export const COLS = `shard, id, tenant, key, due_at, bucket, payload, target, target_options,
  trace_context, attempts, max_attempts, expire_after_ms, version, fence, last_error,
  last_result, created_at, updated_at, fired_at, schedule_id, nominal, tags, callbacks, callback_of`;

/** COLS, each taken from table alias `alias` (a statement that joins names its table). */
export function colsOf(alias: string): string {
  return COLS.split(",")
    .map((c) => `${alias}.${c.trim()}`)
    .join(", ");
}

/**
 * A row of any table as a full job row (rows.ts turns it into a Job). A held job (jobs_held,
 * pauses.ts) is pending with the pause that holds it in paused_by.
 */
export const AS_PENDING = `${COLS}, 'pending'::text AS status, NULL::text AS lease_owner,
  NULL::bigint AS lease_expires_at, NULL::bigint AS finished_at, NULL::text AS paused_by`;
export const AS_HELD = `${COLS}, 'pending'::text AS status, NULL::text AS lease_owner,
  NULL::bigint AS lease_expires_at, NULL::bigint AS finished_at, pause_id AS paused_by`;
export const AS_CLAIMED = `${COLS}, 'claimed'::text AS status, lease_owner, lease_expires_at,
  NULL::bigint AS finished_at, NULL::text AS paused_by`;
export const AS_HISTORY = `${COLS}, status, NULL::text AS lease_owner,
  NULL::bigint AS lease_expires_at, finished_at, NULL::text AS paused_by`;

/** The change feed's columns a write fills (postgres/changes.ts; tx and seq are defaults). */
export const CHANGE_COLS = `tenant, job_id, kind, status, due_at, attempts, error, at`;
