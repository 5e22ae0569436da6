/**
 * The SQLite statements of pauses (see pauses.ts), merged into statements.ts's SQL. A pause
 * is a row of `pauses` (primary key id, a ULID); a held job is a row of `held` (primary key
 * the job's seq, index held_pause (pause_id, seq) for a resume's batches).
 */

/** A job is pending when it has neither a claim nor an outcome (as statements.ts says). */
const IS_PENDING = `NOT EXISTS (SELECT 1 FROM claims c2 WHERE c2.id = j.id)
  AND NOT EXISTS (SELECT 1 FROM finished f2 WHERE f2.due_at = j.due_at AND f2.id = j.id)`;

const PAUSE_COLUMNS = `id, tenant, scope_kind, scope_value, on_resume, state, paused_at,
  resumed_at, held, hold_done`;

export const PAUSE_SQL = {
  pauseInsert: `INSERT INTO pauses (id, tenant, scope_kind, scope_value, on_resume, state,
      paused_at, held, hold_bucket, hold_seq, hold_done)
    VALUES (@id, @tenant, @kind, @value, @onResume, 'active', @now, 0,
      -9223372036854775808, 0, 0)`,
  pauseById: `SELECT ${PAUSE_COLUMNS} FROM pauses WHERE id = ?`,
  /** Primary key order (creation order); the table holds a row per pause ever made. */
  /** The tenant's open (active or resuming) pauses, for maxOpen: counted in the insert's transaction. */
  pausesOpenCount: `SELECT count(*) AS n FROM pauses WHERE tenant = @tenant AND state <> 'resumed'`,
  pausesAll: `SELECT ${PAUSE_COLUMNS} FROM pauses
    WHERE (@tenant IS NULL OR tenant = @tenant) AND (@after IS NULL OR id > @after)
      AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
    ORDER BY id LIMIT @limit`,
  /** Index pauses_state: the pauses that hold (read by every claim that finds due jobs). */
  pausesActive: `SELECT ${PAUSE_COLUMNS} FROM pauses WHERE state = 'active' ORDER BY id`,
  pauseResume: `UPDATE pauses SET state = 'resuming', resumed_at = @now
    WHERE id = @id AND state = 'active'`,
  pauseResumed: `UPDATE pauses SET state = 'resumed' WHERE id = ? AND state = 'resuming'`,
  pauseHeldAdd: `UPDATE pauses SET held = held + @n WHERE id = @id`,
  /** The next pause with work: an active one still finding its jobs, or a resuming one. */
  pauseWithWork: `SELECT ${PAUSE_COLUMNS}, hold_bucket, hold_seq FROM pauses
    WHERE (state = 'active' AND hold_done = 0) OR state = 'resuming'
    ORDER BY id LIMIT 1`,
  pauseHoldCursor: `UPDATE pauses SET hold_bucket = @bucket, hold_seq = @seq, hold_done = @done
    WHERE id = @id`,
  /**
   * Retention: resumed pauses in index pauses_state (state, id) order, older than @before.
   * A resumed pause holds no job (it is resumed once its last held one is given back).
   */
  pausesPurge: `DELETE FROM pauses WHERE id IN (SELECT id FROM pauses
    WHERE state = 'resumed' AND resumed_at < @before ORDER BY id LIMIT @limit)`,
  pausedJobs: `SELECT coalesce(sum(held), 0) AS n FROM pauses
    WHERE state <> 'resumed' AND (@tenant IS NULL OR tenant = @tenant)`,

  heldInsert: `INSERT OR IGNORE INTO held (seq, pause_id) VALUES (?, ?)`,
  heldGet: `SELECT pause_id FROM held WHERE seq = ?`,
  heldDelete: `DELETE FROM held WHERE seq = ? RETURNING pause_id`,
  /** Index held_pause: a resume's next batch. */
  heldOfPause: `SELECT seq FROM held WHERE pause_id = ? ORDER BY seq LIMIT ?`,

  /**
   * Where a hold pass's batch of @limit entries of index jobs_bucket (bucket, seq, ...) ends,
   * after its cursor (as stageChunkEnd does inside one bucket). None: the rest fits.
   */
  holdScanEnd: `SELECT bucket, seq FROM jobs INDEXED BY jobs_bucket
    WHERE (bucket, seq) > (@bucket, @seq) ORDER BY bucket, seq LIMIT 1 OFFSET @limit - 1`,
  /**
   * The tenant's pending, not yet held jobs of a range of jobs_bucket (the index carries the
   * tenant, so other tenants' entries are stepped over without reading their rows); the
   * caller matches each against the pause's scope.
   */
  holdCandidates: `SELECT j.seq AS seq, j.id AS id, j.due_at AS due_at, j.target AS target,
      j.attempts AS attempts, j.tags AS tags
    FROM jobs j INDEXED BY jobs_bucket
    WHERE (j.bucket, j.seq) > (@bucket, @seq) AND (j.bucket, j.seq) <= (@toBucket, @toSeq)
      AND j.tenant = @tenant AND ${IS_PENDING}
      AND NOT EXISTS (SELECT 1 FROM held h WHERE h.seq = j.seq)`,
} as const;
