import { COLS, colsOf } from "./job-columns.js";

/**
 * Parts of statements for pending jobs wherever they are: a pending job's row is in jobs_live,
 * or in jobs_held while a pause holds it (pauses.ts). Whatever changes a pending job (cancel,
 * reschedule, a replacing key, a bulk operation, a series' change) meets it in either table,
 * as SQLite's one jobs table does, and a held job stays held by its pause. Each part is a
 * list of data-modifying CTEs for a statement's WITH; the job table's alias is `j` in
 * `where`. Both tables are reached by primary key (shard, id).
 */

/** Which pending rows: the condition on `j`, the FROM items it joins, what to keep of them. */
interface PendingRows {
  readonly where: string;
  readonly using?: string;
  /** Columns of `using` returned with each row ("u.due AS new_due"). */
  readonly extra?: string;
}

/**
 * The rows deleted from both tables, as CTE `del`: COLS, the holding pause's pause_id (null
 * for a live row), then `extra`.
 */
function deleted(s: string, p: PendingRows): string {
  const using = p.using === undefined ? "" : ` USING ${p.using}`;
  const extra = p.extra === undefined ? "" : `, ${p.extra}`;
  return `del_live AS (
      DELETE FROM ${s}.jobs_live j${using} WHERE ${p.where}
      RETURNING ${colsOf("j")}, NULL::text AS pause_id${extra}
    ), del_held AS (
      DELETE FROM ${s}.jobs_held j${using} WHERE ${p.where}
      RETURNING ${colsOf("j")}, j.pause_id${extra}
    ), del AS (
      SELECT * FROM del_live UNION ALL SELECT * FROM del_held
    )`;
}

/** The held rows of `del_held` leave their pause's count, one update per pause. */
function uncounted(s: string): string {
  return `uncounted AS (
      UPDATE ${s}.pauses p SET held = p.held - c.n
      FROM (SELECT pause_id, count(*) AS n FROM del_held GROUP BY pause_id) c
      WHERE p.id = c.pause_id
    )`;
}

/**
 * The pending rows deleted (CTE `del`, see deleted); the held ones leave their pause's count,
 * one update per pause.
 */
export function deletePending(s: string, p: PendingRows): string {
  return `${deleted(s, p)}, ${uncounted(s)}`;
}

/**
 * One index probe per job for a batch: CTE `name` has the (tableoid, ctid) of the row of
 * `table` (alias j) that each row of `picked` (alias u, with shard and id) names and `where`
 * accepts, with u's columns. The probe is a LATERAL subquery with LIMIT 1 (a job has one
 * row in a table), which the planner cannot pull up into a join: a join of the batch's
 * (shard, id) array with a job table was planned as a hash join over a sequential scan of
 * every partition (EXPLAIN ANALYZE of an erase of 100 tagged jobs among 60,000: a Seq Scan
 * of each jobs_live partition, 60,000 rows read, 80 ms of the statement's 98).
 */
export function probed(s: string, name: string, table: string, picked: string, where: string) {
  return `${name} AS (
      SELECT f.tableoid, f.ctid, u.* FROM ${picked}
      CROSS JOIN LATERAL (SELECT j.tableoid, j.ctid FROM ${s}.${table} j
        WHERE j.shard = u.shard AND j.id = u.id AND ${where} LIMIT 1) f
    )`;
}

/** On `j`, the rows of CTE `at` (alias u, from `probed`), by (tableoid, ctid). */
function foundBy(at: string): string {
  return `j.ctid = ANY (ARRAY(SELECT ctid FROM ${at}))
        AND j.tableoid = u.tableoid AND j.ctid = u.ctid`;
}

/**
 * The rows `probed` found (CTE `at`, alias u), read by (tableoid, ctid): a TID scan of each
 * partition. `where` is checked on the row as read.
 */
export function selectProbed(s: string, table: string, at: string, where: string, columns: string) {
  return `SELECT ${columns} FROM ${s}.${table} j, ${at} u WHERE ${foundBy(at)} AND ${where}`;
}

/**
 * The rows `probed` found (CTE `at`, alias u), deleted by (tableoid, ctid): a TID scan of
 * each partition, as the claim's move (statements.ts claimMoving). `where` is checked again
 * on the row as the delete finds it.
 */
export function deleteProbed(
  s: string,
  table: string,
  at: string,
  where: string,
  returning: string,
) {
  return `DELETE FROM ${s}.${table} j USING ${at} u WHERE ${foundBy(at)} AND ${where}
      RETURNING ${returning}`;
}

/** A bulk operation's batch of pending jobs (deletePendingBatch, movePendingBatch). */
interface PendingBatch {
  /** A FROM item aliased u: shard, id, the due_at the batch read, any columns of its own. */
  readonly picked: string;
  /** The condition on `j`. */
  readonly where: string;
}

/**
 * CTEs `live_at` and `held_at`: where each job of the batch is pending (one probe each), at
 * the due time the batch read. A job whose due time changed since (a single reschedule or a
 * replace by key committed in between) is found in neither, held or not: a batch never
 * writes a due time worked out from one the job no longer has.
 */
function probedPending(s: string, p: PendingBatch): string {
  const atRead = `j.due_at = u.due_at AND ${p.where}`;
  return `${probed(s, "live_at", "jobs_live", p.picked, atRead)},
    ${probed(s, "held_at", "jobs_held", p.picked, atRead)}`;
}

/**
 * deletePending for a bulk operation's batch: the jobs of `picked` (a FROM item aliased u
 * with shard, id and the due_at the batch read) that `where` (on j) accepts, as CTE `del`,
 * each found by one index probe: in jobs_live on (shard, id, due_at) in the one partition
 * u.due_at leaves after run-time pruning (the planner takes the primary key or
 * jobs_live_tenant_due (tenant, due_at, id), both exact), in jobs_held by its primary key
 * (shard, id) and the due time read. A job moved since the batch read it (another due time,
 * claimed) is not found and is not deleted.
 */
export function deletePendingBatch(s: string, p: PendingBatch): string {
  return `${probedPending(s, p)}, del_live AS (
      ${deleteProbed(s, "jobs_live", "live_at", p.where, `${colsOf("j")}, NULL::text AS pause_id`)}
    ), del_held AS (
      ${deleteProbed(s, "jobs_held", "held_at", p.where, `${colsOf("j")}, j.pause_id`)}
    ), del AS (
      SELECT * FROM del_live UNION ALL SELECT * FROM del_held
    ), ${uncounted(s)}`;
}

/**
 * The pending rows written again with new column values: a live row is deleted and inserted
 * (to its new partition and bucket); a held one is updated in place in jobs_held, still held
 * by its pause. `values`: COLS' new values in order, over the old row's columns and `extra`.
 * CTE `del` has the old rows (see deleted; a held one as read, updated only if its version
 * is still the one read), `moved` the rows as written (COLS, pause_id): only these changed.
 * jobs_live's insert trigger moves a live row's tag entries to its new due time; `retag`
 * does it for the held ones (false: the caller rewrites the entries itself).
 *
 * In place, not deleted and inserted: a resume's release deleting the held row meanwhile
 * waits for this statement and then deletes the row as it is now (a delete waiting on an
 * update follows it); a row deleted and inserted again would be missed by that release and
 * stay held by a pause no longer active (pauses.ts).
 */
export function movePending(
  s: string,
  p: PendingRows & { readonly values: string; readonly retag?: boolean },
): string {
  const using = p.using === undefined ? "" : `, ${p.using}`;
  const extra = p.extra === undefined ? "" : `, ${p.extra}`;
  return `del_live AS (
      DELETE FROM ${s}.jobs_live j${p.using === undefined ? "" : ` USING ${p.using}`}
      WHERE ${p.where}
      RETURNING ${colsOf("j")}, NULL::text AS pause_id${extra}
    ), held_old AS (
      SELECT ${colsOf("j")}, j.pause_id${extra} FROM ${s}.jobs_held j${using} WHERE ${p.where}
    ), ${rewritten(s, p)}`;
}

/**
 * movePending for a bulk operation's batch: each job of `picked` found by one index probe
 * where the batch read it, as deletePendingBatch finds it, then deleted (live) or read (held)
 * by (tableoid, ctid). `extra` takes u's columns ("u.due AS new_due"). A join of the batch
 * with the job tables was planned as a Seq Scan of every jobs_live partition (EXPLAIN
 * ANALYZE of a reschedule of 100 jobs among 20,000 over 10 partitions: all 20,100 rows read).
 */
export function movePendingBatch(
  s: string,
  p: PendingBatch & { readonly extra?: string; readonly values: string; readonly retag?: boolean },
): string {
  const extra = p.extra === undefined ? "" : `, ${p.extra}`;
  return `${probedPending(s, p)}, del_live AS (
      ${deleteProbed(s, "jobs_live", "live_at", p.where, `${colsOf("j")}, NULL::text AS pause_id${extra}`)}
    ), held_old AS (
      ${selectProbed(s, "jobs_held", "held_at", p.where, `${colsOf("j")}, j.pause_id${extra}`)}
    ), ${rewritten(s, p)}`;
}

/**
 * movePending's writes after CTEs del_live (the live rows deleted) and held_old (the held
 * rows read), each with COLS, pause_id and the extra columns.
 */
function rewritten(s: string, p: { readonly values: string; readonly retag?: boolean }): string {
  // Each row's tags as an array in the index condition: all of job_tags' primary key per
  // row. (A join to the tags' JSON elements was planned as a sequential scan of job_tags: a
  // set-returning function is estimated at 100 rows a call.)
  const retagged = `, retagged AS (
      UPDATE ${s}.job_tags t SET due_at = k.due_at FROM kept k
      WHERE k.tags IS NOT NULL AND t.tenant = k.tenant AND t.job_id = k.id
        AND t.tag = ANY (ARRAY(SELECT json_array_elements_text(k.tags::json)))
        AND t.due_at <> k.due_at
    )`;
  return `del AS (
      SELECT * FROM del_live UNION ALL SELECT * FROM held_old
    ), back AS (
      INSERT INTO ${s}.jobs_live (${COLS}) SELECT ${p.values} FROM del_live
      RETURNING ${COLS}, NULL::text AS pause_id
    ), held_new (${COLS}, pause_id, read_version) AS (
      SELECT ${p.values}, pause_id, version FROM held_old
    ), kept AS (
      UPDATE ${s}.jobs_held h SET (${COLS}) = (${colsOf("n")}) FROM held_new n
      WHERE h.shard = n.shard AND h.id = n.id AND h.version = n.read_version
      RETURNING ${colsOf("h")}, h.pause_id
    ), moved AS (
      SELECT * FROM back UNION ALL SELECT * FROM kept
    )${p.retag === false ? "" : retagged}`;
}
