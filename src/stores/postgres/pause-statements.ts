import { AS_HELD, AS_PENDING, CHANGE_COLS, COLS } from "./job-columns.js";

/**
 * The statements of pauses for one schema (pauses.ts). A pause is a row of `pauses`; a held
 * job's row has moved from jobs_live (or, at a claim, from jobs_claimed) to jobs_held with
 * the pause's id, in one statement that also writes its `paused` change and the pause's
 * count. Every statement that puts a row into jobs_held reads the pause it names with
 * FOR SHARE in the same transaction (pausesActiveLocked), so a resume (an UPDATE of that
 * row) waits for it and its release pass then sees the row: no job is ever held by a pause
 * that is no longer active.
 */
export function pauseStatements(schema: string) {
  const s = `"${schema}"`;
  const pauseCols = `id, tenant, scope_kind, scope_value, on_resume, state, paused_at,
    resumed_at, held, hold_done, hold_due, hold_id`;
  /** The job columns a row keeps when it is held ($ columns: the holding pause). */
  const heldInsert = (from: string, restore: string) => `INSERT INTO ${s}.jobs_held (${COLS},
      pause_id)
    SELECT shard, id, tenant, key, due_at, bucket, payload, target, target_options,
      trace_context, ${restore}, last_error, last_result, created_at, updated_at, fired_at,
      schedule_id, nominal, tags, callbacks, callback_of, pause_id
    FROM ${from}
    RETURNING tenant, id, due_at, attempts, pause_id`;
  /** The `paused` change of each held row and the pauses' counts (one upsert per pause). */
  const heldTail = (now: string) => `, changed AS (
      INSERT INTO ${s}.job_changes (${CHANGE_COLS})
      SELECT tenant, id, 'paused', 'pending', due_at, attempts, NULL, ${now} FROM ins
    ), counted AS (
      UPDATE ${s}.pauses p SET held = p.held + c.n
      FROM (SELECT pause_id, count(*) AS n FROM ins GROUP BY pause_id) c WHERE p.id = c.pause_id
    )
    SELECT id, pause_id FROM ins`;
  return {
    /** The new pause, and a notification ("pauses") to every listening node. */
    insert: `WITH p AS (
        INSERT INTO ${s}.pauses (id, tenant, scope_kind, scope_value, on_resume, state,
          paused_at, hold_due, hold_id)
        VALUES ($1, $2, $3, $4, $5, 'active', $6::bigint, ${Number.MIN_SAFE_INTEGER}, '')
        RETURNING ${pauseCols}
      )
      SELECT p.*, n.sent FROM p
        CROSS JOIN LATERAL (SELECT pg_notify($7, 'pauses') IS NULL AS sent FROM p) n`,
    /**
     * For maxOpen: a lock on the schema's tenant ($1: the schema's notification channel and
     * the tenant, pauses.ts) to the transaction's end, so a second insert of the tenant waits until the first commits and
     * its count (a statement of its own, a fresh snapshot: READ COMMITTED) sees the row. The
     * one-bigint form: the liveness locks' two-int keys are another key space.
     */
    openLock: `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
    /** The tenant's open (active or resuming) pauses (index pauses_tenant). */
    openCount: `SELECT count(*)::int AS n FROM ${s}.pauses WHERE tenant = $1 AND state <> 'resumed'`,
    /** Primary key. */
    byId: `SELECT ${pauseCols} FROM ${s}.pauses WHERE id = $1`,
    /** Primary key order, or index pauses_tenant; the table holds a row per pause ever made. */
    list: `SELECT ${pauseCols} FROM ${s}.pauses
      WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text[] IS NULL OR state = ANY($2::text[]))
        AND ($3::text IS NULL OR id > $3)
      ORDER BY id LIMIT $4`,
    /**
     * The pauses that hold now (index pauses_open), locked FOR SHARE until the transaction
     * ends: a resume of one of them waits until the jobs this transaction holds for it are
     * committed (see the file's comment).
     */
    activeLocked: `SELECT ${pauseCols} FROM ${s}.pauses WHERE state = 'active' ORDER BY id
      FOR SHARE`,
    /** Resumes an active pause, and notifies ("pauses") every listening node's keeper. */
    resume: `WITH r AS (
        UPDATE ${s}.pauses SET state = 'resuming', resumed_at = $2::bigint
        WHERE id = $1 AND state = 'active' RETURNING ${pauseCols}
      )
      SELECT r.*, n.sent FROM r
        CROSS JOIN LATERAL (SELECT pg_notify($3, 'pauses') IS NULL AS sent FROM r) n`,
    resumed: `UPDATE ${s}.pauses SET state = 'resumed' WHERE id = $1 AND state = 'resuming'`,
    /** Whether any pause has work (index pauses_open): an idle pass is this one statement. */
    anyWork: `SELECT EXISTS (SELECT 1 FROM ${s}.pauses
      WHERE state <> 'resumed' AND (state = 'resuming' OR NOT hold_done)) AS work`,
    /**
     * The next pause with work (an active one still finding its jobs, or a resuming one),
     * locked: two nodes' keepers never work one pause at once (SKIP LOCKED: the other takes
     * the next). Index pauses_open.
     */
    withWork: `SELECT ${pauseCols} FROM ${s}.pauses
      WHERE state <> 'resumed' AND (state = 'resuming' OR NOT hold_done)
      ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    /**
     * withWork for a caller that waits for the work to be done (pausesWork's `wait`): the
     * lock is waited for, not skipped. Once the holder commits, the row is read again as it
     * is then (READ COMMITTED), and a pause whose work that step finished is not returned
     * (nor, under LIMIT 1, another in its place: the caller looks again).
     */
    withWorkWaiting: `SELECT ${pauseCols} FROM ${s}.pauses
      WHERE state <> 'resumed' AND (state = 'resuming' OR NOT hold_done)
      ORDER BY id LIMIT 1 FOR UPDATE`,
    holdCursor: `UPDATE ${s}.pauses SET hold_due = $2::bigint, hold_id = $3, hold_done = $4
      WHERE id = $1`,
    /**
     * Retention: resumed pauses resumed before $1, at most $2, oldest id first. No index
     * holds resumed pauses (pauses_open leaves them out): the table is kept small by this
     * very purge, and a resumed pause holds no job.
     */
    purge: `DELETE FROM ${s}.pauses WHERE id IN (SELECT id FROM ${s}.pauses
      WHERE state = 'resumed' AND resumed_at < $1 ORDER BY id LIMIT $2)`,
    /** Held jobs of open pauses (of $1, or all): the pauses' counters, never a count of rows. */
    heldCount: `SELECT COALESCE(sum(held), 0)::bigint AS n FROM ${s}.pauses
      WHERE state <> 'resumed' AND ($1::text IS NULL OR tenant = $1)`,

    /**
     * A hold pass's batch: the tenant's pending jobs after the cursor ($2 due, $3 id) in
     * index jobs_live_tenant_due (tenant, due_at, id), every partition merged in that order;
     * the caller matches each against the pause's scope (pauseMatches) and holds by ctid.
     */
    candidates: `SELECT tableoid::bigint AS rel, ctid::text AS tid, shard, id, due_at, target, tags
      FROM ${s}.jobs_live WHERE tenant = $1 AND (due_at, id) > ($2::bigint, $3::text)
      ORDER BY due_at, id LIMIT $4::int`,
    /**
     * Holds rows of jobs_live found by (tableoid, ctid) in this transaction or just before
     * ($1 tableoids, $2 ctids, $3 ids, $4 pause ids; $5 now): the id check drops an entry
     * whose row has moved since (that job is held later by the claim, if it comes due). The
     * live_deleted trigger takes them off the bucket counters.
     */
    holdLive: `WITH u AS (
        SELECT * FROM unnest($1::bigint[], $2::tid[], $3::text[], $4::text[])
          AS u(rel, tid, id, pause_id)
      ), del AS (
        DELETE FROM ${s}.jobs_live l USING u
        WHERE l.ctid = ANY ($2::tid[]) AND l.tableoid::bigint = u.rel AND l.ctid = u.tid
          AND l.id = u.id
        RETURNING l.*, u.pause_id
      ), ins AS (${heldInsert("del", "attempts, max_attempts, expire_after_ms, version, fence")})
      ${heldTail("$5::bigint")}`,
    /**
     * Holds jobs this transaction's claim just took ($1 shards, $2 ids, $3 pause ids; $4 now;
     * primary key of jobs_claimed): the claim's attempt, fence and version are undone and its
     * `claimed` changes deleted (this transaction's rows of the feed's primary key), so the
     * feed says only `paused`, as when the pause's pass holds a job.
     */
    holdClaimed: `WITH u AS (
        SELECT * FROM unnest($1::int[], $2::text[], $3::text[]) AS u(shard, id, pause_id)
      ), del AS (
        DELETE FROM ${s}.jobs_claimed c USING u WHERE c.shard = u.shard AND c.id = u.id
        RETURNING c.*, u.pause_id
      ), unclaimed AS (
        DELETE FROM ${s}.job_changes WHERE tx = pg_current_xact_id() AND kind = 'claimed'
          AND job_id = ANY ($2::text[])
      ), ins AS (${heldInsert(
        "del",
        "attempts - 1, max_attempts, expire_after_ms, version - 1, fence - 1",
      )})
      ${heldTail("$4::bigint")}`,

    /**
     * A resume's next batch of a pause's held jobs (index jobs_held_pause), locked to the
     * release's end: the policy (shift, expire) is decided from these due times in the node,
     * so no reschedule may change them before the release's delete. A reschedule of a held
     * job (pending-rows.ts movePending updates it in place) holding a row when this reads is
     * waited for, and the row read as it left it (Read Committed re-reads a row a lock waited
     * on); one starting later waits for the release. Unlocked, the delete waited instead, and
     * a job the reschedule moved past the resume was still shifted or expired by its old time.
     */
    heldOfPause: `SELECT ${AS_HELD} FROM ${s}.jobs_held WHERE pause_id = $1
      ORDER BY shard, id LIMIT $2::int FOR UPDATE`,
    /**
     * Gives held jobs back ($1 shards, $2 ids, $3 actions, $4 due times, $5 buckets; $6 the
     * pause, $7 now, $8 the expiry error): `fire` and `shift` back to jobs_live at their
     * (new) due time (version + 1 when it moved), `expire` to history as expired. The
     * expired ones come back, for their series to advance. The rows are those heldOfPause
     * locked in this transaction, unchanged since it read them.
     */
    release: `WITH u AS (
        SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
          AS u(shard, id, action, due, bkt)
      ), del AS (
        DELETE FROM ${s}.jobs_held h USING u
        WHERE h.shard = u.shard AND h.id = u.id AND h.pause_id = $6
        RETURNING h.*, u.action, u.due, u.bkt
      ), back AS (
        INSERT INTO ${s}.jobs_live (${COLS})
        SELECT shard, id, tenant, key, CASE WHEN action = 'fire' THEN due_at ELSE due END,
          CASE WHEN action = 'fire' THEN bucket ELSE bkt END, payload, target, target_options,
          trace_context, attempts, max_attempts, expire_after_ms,
          version + CASE WHEN action = 'shift' AND due <> due_at THEN 1 ELSE 0 END, fence,
          last_error, last_result,
          created_at, $7::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of
        FROM del WHERE action <> 'expire'
      ), expired AS (
        INSERT INTO ${s}.jobs_history (${COLS}, status, finished_at)
        SELECT shard, id, tenant, key, due_at, bucket, payload, target, target_options,
          trace_context, attempts, max_attempts, expire_after_ms, version + 1, fence,
          $8::text, last_result, created_at, $7::bigint, fired_at, schedule_id, nominal, tags,
          callbacks, callback_of, 'expired', $7::bigint
        FROM del WHERE action = 'expire'
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, CASE WHEN action = 'expire' THEN 'expired' ELSE 'resumed' END,
          CASE WHEN action = 'expire' THEN 'expired' ELSE 'pending' END,
          CASE WHEN action = 'shift' THEN due ELSE due_at END, attempts,
          CASE WHEN action = 'expire' THEN $8::text END, $7::bigint
        FROM del
      ), counted AS (
        UPDATE ${s}.pauses SET held = held - (SELECT count(*) FROM del) WHERE id = $6
      )
      SELECT ${AS_PENDING} FROM del WHERE action = 'expire'`,
  } as const;
}

export type PauseStatements = ReturnType<typeof pauseStatements>;
