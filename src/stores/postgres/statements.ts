/**
 * Every SQL statement of the PostgreSQL store, one per operation, built once per schema.
 * Each says what it relies on. Statements are sent unnamed, so PostgreSQL plans them with
 * the actual parameter values: partition pruning happens at plan time (a generic plan of
 * a partitioned table would lock every partition on each execution).
 *
 * Dialect notes against src/stores/sqlite/statements.ts: SQLite keeps every job in one
 * table and a separate hot index; here a transition moves the row between `jobs_live`
 * (pending), `jobs_claimed` and `jobs_history` in one statement (data-modifying CTEs), so
 * each table holds one kind of row and its indexes need no status predicate.
 */

import { AS_CLAIMED, AS_HELD, AS_HISTORY, AS_PENDING, CHANGE_COLS, COLS } from "./job-columns.js";
import { deletePending, movePending } from "./pending-rows.js";

/** Whether any pause holds (index pauses_open: the few pauses not yet resumed). */
const ANY_PAUSED = (s: string) => `EXISTS (SELECT 1 FROM ${s}.pauses WHERE state = 'active')`;

export type Statements = ReturnType<typeof statements>;

export function statements(schema: string) {
  const s = `"${schema}"`;
  return {
    /**
     * The database's time, epoch ms, for the engine's clock-skew check: clock_timestamp()
     * is the time at execution (now() would be the transaction's start).
     */
    clockRead: `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms`,
    metaGet: `SELECT value FROM ${s}.meta WHERE name = $1`,
    metaInsert: `INSERT INTO ${s}.meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,

    /**
     * Bulk insert: one statement for the whole batch, arrays unnested server-side (no
     * per-row round trip or statement). Routed to partitions by due_at; the statement
     * trigger live_inserted adds one counter row per (bucket, tenant). Each tag of a job
     * becomes its job_tags entry in the same statement. Only while a pause holds does it
     * return rows: where each new row is, for pauses.ts to hold the covered ones.
     */
    liveInsert: `WITH ins AS (
        INSERT INTO ${s}.jobs_live (shard, id, tenant, key, due_at, bucket, payload,
          target, target_options, trace_context, max_attempts, expire_after_ms, created_at,
          updated_at, schedule_id, nominal, tags, callbacks, callback_of)
        SELECT u.shard, u.id, u.tenant, u.key, u.due_at, u.bucket, u.payload, u.target,
          u.target_options, u.trace_context, u.max_attempts, u.expire_after_ms, $13::bigint,
          $13::bigint, u.schedule_id, u.nominal, u.tags, u.callbacks, u.callback_of
        FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
          $7::text[], $8::text[], $9::text[], $10::text[], $11::int[], $12::bigint[],
          $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])
          AS u(shard, id, tenant, key, due_at, bucket, payload, target, target_options,
            trace_context, max_attempts, expire_after_ms, schedule_id, nominal, tags, callbacks, callback_of)
        RETURNING tableoid, ctid, tenant, id, due_at, shard, tags
      ), tagged AS (
        INSERT INTO ${s}.job_tags (tenant, tag, job_id, shard, due_at)
        SELECT ins.tenant, g.tag, ins.id, ins.shard, ins.due_at
        FROM ins CROSS JOIN LATERAL json_array_elements_text(ins.tags::json) AS g(tag)
        WHERE ins.tags IS NOT NULL
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'scheduled', 'pending', due_at, 0, NULL, $13::bigint FROM ins
      )
      SELECT tableoid::bigint AS rel, ctid::text AS tid, id FROM ins WHERE ${ANY_PAUSED(s)}`,

    /** Primary key of job_keys: a key taken by a live job makes the insert a no-op. */
    keysClaim: `INSERT INTO ${s}.job_keys (tenant, key, shard, id)
      SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[])
      ON CONFLICT (tenant, key) DO NOTHING
      RETURNING id`,
    keysLookup: `SELECT k.tenant, k.key, k.shard, k.id FROM ${s}.job_keys k
      JOIN unnest($1::text[], $2::text[]) AS u(tenant, key) ON k.tenant = u.tenant AND k.key = u.key`,
    /**
     * keysLookup for a replacing insert: the key rows are locked in (tenant, key) order, so
     * replacements of the same keys queue behind one another and never deadlock. Read
     * Committed re-reads a row locked meanwhile, so the holder found is the current one.
     */
    keysLock: `SELECT k.tenant, k.key, k.shard, k.id FROM ${s}.job_keys k
      WHERE (k.tenant, k.key) IN (SELECT * FROM unnest($1::text[], $2::text[]))
      ORDER BY k.tenant, k.key
      FOR UPDATE OF k`,
    /**
     * A replacing insert (keyMode replace/debounce): the pending holder leaves jobs_live and
     * comes back with the new definition (and the replacing schedule's trace context), in its
     * new partition, or a held holder is rewritten in jobs_held, still held (pending-rows.ts);
     * attempts, fence, last error and created_at stay. Its tag entries become
     * the new tags' ($12): the old ones not kept are deleted and the rest upserted (the
     * statement's parts run on one snapshot, in no set order, so no entry is deleted and
     * inserted again); the delete's tenant and old tags are values of its index condition,
     * so it reads job_tags by its whole primary key (joined to the deleted row, it was
     * planned as a sequential scan of job_tags: 56 ms a replace with 120,000 tag entries).
     * No row: it is not pending (claimed meanwhile).
     */
    replace: `WITH ${movePending(s, {
      where: "j.shard = $1 AND j.id = $2",
      values: `shard, id, tenant, key, $3::bigint, $4::bigint, $5::text, $6::text, $7::text,
          $11::text, attempts, $8::int, $9::bigint, version + 1, fence, last_error, last_result,
          created_at, $10::bigint, fired_at, schedule_id, nominal, $12::text, $13::text,
          callback_of`,
      retag: false,
    })}, changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'replaced', 'pending', due_at, attempts, NULL, $10::bigint FROM moved
      ), untagged AS (
        DELETE FROM ${s}.job_tags t
        WHERE t.tenant = (SELECT tenant FROM moved) AND t.job_id = $2::text
          AND t.tag = ANY (ARRAY(SELECT json_array_elements_text(tags::json) FROM del
            EXCEPT SELECT json_array_elements_text($12::json)))
      ), tagged AS (
        INSERT INTO ${s}.job_tags (tenant, tag, job_id, shard, due_at)
        SELECT moved.tenant, g.tag, moved.id, moved.shard, moved.due_at
        FROM moved CROSS JOIN LATERAL json_array_elements_text(moved.tags::json) AS g(tag)
        WHERE moved.tags IS NOT NULL
        ON CONFLICT (tenant, tag, job_id) DO UPDATE SET due_at = excluded.due_at
      )
      SELECT ${AS_HELD} FROM moved`,

    /**
     * One job by (shard, id): the claimed table's primary key, then the primary key
     * prefix of every live and history partition (the id does not tell the due or finish
     * time, so these partitions cannot be pruned; a probe per partition, off the hot path).
     */
    jobById: `SELECT ${AS_CLAIMED} FROM ${s}.jobs_claimed WHERE shard = $1 AND id = $2
      UNION ALL SELECT ${AS_PENDING} FROM ${s}.jobs_live WHERE shard = $1 AND id = $2
      UNION ALL SELECT ${AS_HISTORY} FROM ${s}.jobs_history WHERE shard = $1 AND id = $2
      UNION ALL SELECT ${AS_HELD} FROM ${s}.jobs_held WHERE shard = $1 AND id = $2
      LIMIT 1`,
    liveJobsByIds: `SELECT ${AS_CLAIMED} FROM ${s}.jobs_claimed
        WHERE (shard, id) IN (SELECT * FROM unnest($1::int[], $2::text[]))
      UNION ALL SELECT ${AS_PENDING} FROM ${s}.jobs_live
        WHERE (shard, id) IN (SELECT * FROM unnest($1::int[], $2::text[]))
      UNION ALL SELECT ${AS_HELD} FROM ${s}.jobs_held
        WHERE (shard, id) IN (SELECT * FROM unnest($1::int[], $2::text[]))`,

    /**
     * The claim, one statement: the due prefix of index (due_at, id) across the partitions
     * that can hold due rows (plan-time pruning drops every partition starting after
     * $1; the default partition is read by the same index), oldest first, bounded by $2,
     * FOR UPDATE SKIP LOCKED so concurrent claimers split the prefix instead of queueing;
     * then the rows move to jobs_claimed with the lease, fence + 1 and attempts + 1.
     */
    claimDue: claimMoving(s, duePrefix(s, "")),
    /**
     * claimDue as one statement on its own (autocommit: no BEGIN/COMMIT round trips), for
     * claims of one-shot jobs while no pause is open (claim.ts). The same read and move, but
     * it moves nothing when a row of the due prefix is a series occurrence (its series must
     * advance in the claim's transaction) or the prefix has rows while a pause is open (the
     * rows it covers must be held in it): then the rows are only locked until the statement
     * ends, and the claim is made again in a transaction. Nothing due is answered here
     * whatever is paused. The column `alone` says which; it comes on one row
     * with the other columns null when nothing moved, so "nothing due" (alone true) and
     * "take the transaction" (alone false) differ. Both probes read what the statement's
     * snapshot sees, as claimDue's `paused` does.
     */
    claimDueAlone: claimMoving(s, duePrefix(s, ", schedule_id"), true),
    /**
     * The claim shared out per tenant: for each tenant of $2 (with its part in $7), that
     * tenant's due prefix of index jobs_live_tenant_due (tenant, due_at, id), a range read per
     * tenant in each partition that can hold due rows (pruned at plan time on $1, as above),
     * oldest first, SKIP LOCKED; then the same move as claimDue. A tenant's due backlog
     * costs only its own part, never a read past it to reach another tenant's due job.
     */
    claimTenantsDue: claimMoving(
      s,
      `SELECT d.tableoid, d.ctid
        FROM unnest($2::text[], $7::int[]) AS a(tenant, n)
        CROSS JOIN LATERAL (
          SELECT tableoid, ctid FROM ${s}.jobs_live l
          WHERE l.tenant = a.tenant AND l.due_at <= $1::bigint
            AND ($5::int[] IS NULL OR l.shard = ANY($5::int[]))
          ORDER BY l.due_at, l.id
          LIMIT a.n
          FOR UPDATE SKIP LOCKED
        ) d`,
    ),
    /**
     * The storage probe, run in one transaction after a disk_full: TRUNCATE gives the probe
     * table (and its TOAST table) new, empty files, so the 64 KiB of random, uncompressed
     * text inserted next must take new blocks from the filesystem of the jobs' tablespace (a
     * write into free pages of existing files would succeed on a disk that is still full).
     */
    storageProbeReset: `TRUNCATE ${s}.storage_probe`,
    storageProbeWrite: `INSERT INTO ${s}.storage_probe (filler)
      SELECT (SELECT string_agg(md5(random()::text || g::text || k::text), '')
        FROM generate_series(1, 256) AS k)
      FROM generate_series(1, 8) AS g`,
    /**
     * Tenants that may have due work, for a claim shared out per tenant: the pending counters
     * of the buckets up to the claim's (primary key of bucket_counts, a row per bucket and
     * tenant: as many as tenants with work in the current and any overdue bucket, never per
     * job), after a rotating cursor ($2).
     */
    dueTenantsAfter: `SELECT DISTINCT tenant FROM ${s}.bucket_counts
      WHERE bucket <= $1::bigint AND pending > 0 AND tenant > $2::text
      ORDER BY tenant LIMIT $3::int`,

    /**
     * Settlements of a batch, one statement: each applies only while the job is still
     * claimed under the same fence (primary key of jobs_claimed plus the fence check);
     * finished jobs move to history (a success keeps the last failed attempt's error, as
     * SQLite does: the job says it succeeded after a retry), retries back to jobs_live at their new due time, and
     * released claims back to jobs_live, the attempt not counted: as they were (unstarted
     * at a stop) or, after an infrastructure failure, at their retry time with its error.
     */
    settle: `WITH st AS (
        SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::text[], $5::text[],
          $6::text[], $7::bigint[], $8::bigint[], $9::bigint[])
          AS st(id, shard, fence, outcome, result, error, fired_at, retry_at, retry_bucket)
      ), done AS (
        DELETE FROM ${s}.jobs_claimed c USING st
        WHERE c.shard = st.shard AND c.id = st.id AND c.fence = st.fence
        RETURNING c.*, st.outcome, st.result AS st_result, st.error AS st_error,
          st.fired_at AS st_fired_at, st.retry_at, st.retry_bucket
      ), finished AS (
        INSERT INTO ${s}.jobs_history (${COLS}, status, finished_at)
        SELECT shard, id, tenant, key, due_at, bucket,
          payload, target, target_options, trace_context,
          attempts, max_attempts, expire_after_ms, version + 1, fence,
          COALESCE(st_error, last_error),
          CASE WHEN outcome = 'succeeded' THEN st_result ELSE NULL END,
          created_at, $10::bigint, COALESCE(st_fired_at, fired_at), schedule_id, nominal, tags, callbacks, callback_of, outcome, $10::bigint
        FROM done WHERE outcome NOT IN ('retry', 'release')
      ), released AS (
        INSERT INTO ${s}.jobs_live (${COLS})
        SELECT shard, id, tenant, key, COALESCE(retry_at, due_at),
          COALESCE(retry_bucket, bucket), payload, target, target_options, trace_context,
            attempts - 1,
          max_attempts, expire_after_ms, version + 1, fence, COALESCE(st_error, last_error),
          last_result, created_at, $10::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of
        FROM done WHERE outcome = 'release'
      ), retried AS (
        INSERT INTO ${s}.jobs_live (${COLS})
        SELECT shard, id, tenant, key, retry_at, retry_bucket,
          payload, target, target_options, trace_context,
          attempts, max_attempts, expire_after_ms, version + 1, fence, st_error, last_result,
          created_at, $10::bigint, st_fired_at, schedule_id, nominal, tags, callbacks, callback_of
        FROM done WHERE outcome = 'retry'
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id,
          CASE outcome WHEN 'retry' THEN 'failed'
            WHEN 'release' THEN CASE WHEN retry_at IS NULL THEN 'released' ELSE 'deferred' END
            ELSE outcome END,
          CASE WHEN outcome IN ('retry', 'release') THEN 'pending' ELSE outcome END,
          COALESCE(retry_at, due_at),
          CASE WHEN outcome = 'release' THEN attempts - 1 ELSE attempts END,
          CASE WHEN outcome = 'succeeded' OR (outcome = 'release' AND retry_at IS NULL) THEN NULL
            ELSE COALESCE(st_error, last_error) END,
          $10::bigint
        FROM done
      )
      SELECT id, fence FROM done`,

    /**
     * Cancel: only a pending job (a row of jobs_live, or of jobs_held, whose pause's count
     * it leaves) can be cancelled.
     */
    cancel: `WITH ${deletePending(s, {
      where: "j.shard = $1 AND j.id = $2 AND ($3::text IS NULL OR j.tenant = $3)",
    })}, moved AS (
        INSERT INTO ${s}.jobs_history (${COLS}, status, finished_at)
        SELECT shard, id, tenant, key, due_at, bucket, payload, target, target_options,
          trace_context, attempts, max_attempts, expire_after_ms, version + 1, fence, last_error,
          last_result, created_at, $4::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of, 'cancelled', $4::bigint
        FROM del
        RETURNING *
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'cancelled', 'cancelled', due_at, attempts, NULL, $4::bigint FROM moved
      )
      SELECT ${AS_HISTORY} FROM moved`,

    /**
     * Reschedule: delete and re-insert, so the row moves to its new partition and bucket; a
     * held job's row is rewritten in jobs_held, still held, its tag entries following.
     */
    reschedule: `WITH ${movePending(s, {
      where: `j.shard = $1 AND j.id = $2 AND ($3::text IS NULL OR j.tenant = $3)
        AND ($4::int IS NULL OR j.version = $4)`,
      values: `shard, id, tenant, key, $5::bigint, $6::bigint, payload, target, target_options,
          trace_context, attempts, max_attempts, expire_after_ms, version + 1, fence, last_error,
          last_result, created_at, $7::bigint, fired_at, schedule_id, nominal, tags, callbacks,
          callback_of`,
    })}, changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'rescheduled', 'pending', due_at, attempts, NULL, $7::bigint FROM moved
      )
      SELECT ${AS_HELD} FROM moved`,

    /** Retry a dead job: history -> live with a fresh attempt budget (its key: retryKeyTake). */
    retryDead: `WITH del AS (
        DELETE FROM ${s}.jobs_history WHERE shard = $1 AND id = $2 AND status = 'dead'
          AND ($3::text IS NULL OR tenant = $3) AND ($4::int IS NULL OR version = $4)
        RETURNING *
      ), ins AS (
        INSERT INTO ${s}.jobs_live (${COLS})
        SELECT shard, id, tenant, key, $5::bigint, $6::bigint,
          payload, target, target_options, trace_context,
          0, max_attempts, expire_after_ms, version + 1, fence, last_error, last_result, created_at,
          $7::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of
        FROM del
        RETURNING *
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'retried', 'pending', due_at, attempts, NULL, $7::bigint FROM ins
      )
      SELECT ${AS_PENDING} FROM ins`,
    /**
     * Before a retry, in the same transaction: the dead job takes its idempotency key back
     * (job_keys primary key), unless another live job holds it now, whose id comes back.
     * Both carry the same tenant and version filters as retryDead ($3, $4): a caller who is
     * not the job's tenant (or holds a stale version) must not touch that tenant's keys.
     */
    retryKeyTake: `INSERT INTO ${s}.job_keys (tenant, key, shard, id)
      SELECT tenant, key, shard, id FROM ${s}.jobs_history
      WHERE shard = $1 AND id = $2 AND status = 'dead' AND key IS NOT NULL
        AND ($3::text IS NULL OR tenant = $3) AND ($4::int IS NULL OR version = $4)
      ON CONFLICT (tenant, key) DO NOTHING`,
    retryKeyHolder: `SELECT k.id FROM ${s}.jobs_history h
      JOIN ${s}.job_keys k ON k.tenant = h.tenant AND k.key = h.key
      WHERE h.shard = $1 AND h.id = $2 AND k.id <> h.id
        AND ($3::text IS NULL OR h.tenant = $3)`,

    /**
     * Expired leases (index jobs_claimed_lease), oldest first, SKIP LOCKED so two sweepers
     * split the work: back to jobs_live (same due time) or to history as dead when no
     * attempts are left. The fence stays: only a claim bumps it. Also reads the earliest
     * lease left running (the same index, one descent), for the sweeper's next wake-up.
     */
    leasesExpire: `WITH exp AS (
        SELECT shard, id FROM ${s}.jobs_claimed WHERE lease_expires_at <= $1::bigint
        ORDER BY lease_expires_at LIMIT $2::int FOR UPDATE SKIP LOCKED
      ), del AS (
        DELETE FROM ${s}.jobs_claimed c USING exp WHERE c.shard = exp.shard AND c.id = exp.id
        RETURNING c.*
      ), dead AS (
        INSERT INTO ${s}.jobs_history (${COLS}, status, finished_at)
        SELECT shard, id, tenant, key, due_at, bucket,
          payload, target, target_options, trace_context,
          attempts,
          max_attempts, expire_after_ms, version + 1, fence, $3::text, NULL, created_at, $1::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of,
          'dead', $1::bigint
        FROM del WHERE attempts >= max_attempts
        RETURNING 1
      ), requeued AS (
        INSERT INTO ${s}.jobs_live (${COLS})
        SELECT shard, id, tenant, key, due_at, bucket,
          payload, target, target_options, trace_context,
          attempts,
          max_attempts, expire_after_ms, version + 1, fence, $3::text, last_result, created_at, $1::bigint,
          fired_at, schedule_id, nominal, tags, callbacks, callback_of
        FROM del WHERE attempts < max_attempts
        RETURNING due_at
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'requeued' END,
          CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'pending' END, due_at, attempts,
          $3::text, $1::bigint
        FROM del
      )
      SELECT (SELECT count(*) FROM dead)::int AS dead, (SELECT count(*) FROM requeued)::int AS requeued,
        (SELECT json_agg(row_to_json(del)) FROM del WHERE callbacks IS NOT NULL) AS called,
        (SELECT min(due_at) FROM requeued)::bigint AS earliest,
        (SELECT min(lease_expires_at) FROM ${s}.jobs_claimed
          WHERE lease_expires_at > $1::bigint)::bigint AS next_expires_at`,

    /**
     * The lease heartbeat: every claim of one owner, one statement. jobs_claimed holds only
     * the work in flight, so the owner filter needs no index of its own.
     */
    leasesRenew: `UPDATE ${s}.jobs_claimed SET lease_expires_at = $2::bigint + $3::bigint
      WHERE lease_owner = $1`,

    /**
     * Claims of this node's earlier incarnations whose renewals stopped (index
     * jobs_claimed_lease bounds the read; the owner prefix is checked per row), SKIP LOCKED
     * like the sweeper: back to jobs_live as they were, the attempt not counted (a released
     * claim). The fence stays: only a claim bumps it.
     */
    leasesReleaseStale: `WITH st AS (
        SELECT shard, id FROM ${s}.jobs_claimed
        WHERE lease_expires_at <= $3::bigint AND left(lease_owner, length($1::text)) = $1::text
          AND lease_owner <> $2::text
        ORDER BY lease_expires_at LIMIT $4::int FOR UPDATE SKIP LOCKED
      ), del AS (
        DELETE FROM ${s}.jobs_claimed c USING st WHERE c.shard = st.shard AND c.id = st.id
        RETURNING c.*
      ), released AS (
        INSERT INTO ${s}.jobs_live (${COLS})
        SELECT shard, id, tenant, key, due_at, bucket,
          payload, target, target_options, trace_context,
          attempts - 1, max_attempts, expire_after_ms, version + 1, fence, last_error,
          last_result, created_at, $5::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of
        FROM del
        RETURNING due_at
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'released', 'pending', due_at, attempts - 1, NULL, $5::bigint FROM del
      )
      SELECT count(*)::int AS released, min(due_at)::bigint AS earliest FROM released`,

    /**
     * Earliest pending due time: the earliest bucket from the counters (primary key of
     * bucket_counts), then the first entry of index (due_at, id) inside that bucket's
     * range (its partition and the default one, pruned at run time). Never a scan. With
     * shards, only their jobs count: when the earliest bucket holds none of them, the
     * later partitions are searched too (one index descent each, off the hot path).
     */
    nextDue: `WITH b AS (SELECT min(bucket) AS bucket FROM ${s}.bucket_counts)
      SELECT (SELECT bucket FROM b) AS bucket,
        COALESCE(
          (SELECT min(due_at) FROM ${s}.jobs_live
            WHERE due_at >= (SELECT bucket FROM b) AND due_at < (SELECT bucket FROM b) + $1::bigint
              AND ($2::int[] IS NULL OR shard = ANY($2::int[]))),
          (SELECT min(due_at) FROM ${s}.jobs_live
            WHERE $2::int[] IS NOT NULL AND due_at >= (SELECT bucket FROM b) + $1::bigint
              AND shard = ANY($2::int[]))
        ) AS due_at`,

    bucketCounts: `SELECT bucket, sum(pending)::bigint AS pending FROM ${s}.bucket_counts
      WHERE bucket >= $1 AND bucket < $2 AND ($3::text IS NULL OR tenant = $3)
      GROUP BY bucket HAVING sum(pending) > 0 ORDER BY bucket`,

    /**
     * Pending from the bucket counters plus the open pauses' held counts, claimed by
     * counting jobs_claimed (work in flight), history from its counters.
     */
    statusCounts: `SELECT 'pending' AS status, COALESCE(sum(pending), 0)::bigint AS n
        FROM ${s}.bucket_counts WHERE ($1::text IS NULL OR tenant = $1)
      UNION ALL SELECT 'pending', COALESCE(sum(held), 0)::bigint FROM ${s}.pauses
        WHERE state <> 'resumed' AND ($1::text IS NULL OR tenant = $1)
      UNION ALL SELECT 'claimed', count(*) FROM ${s}.jobs_claimed
        WHERE ($1::text IS NULL OR tenant = $1)
      UNION ALL SELECT status, sum(n)::bigint FROM ${s}.history_counts
        WHERE ($1::text IS NULL OR tenant = $1) GROUP BY status`,

    /**
     * Listing: index (due_at, id) of each table, partitions pruned to [from, to). Pending
     * jobs are those of jobs_live and the held ones (jobs_held_due), merged.
     */
    listPending: `(SELECT ${AS_PENDING} FROM ${s}.jobs_live
        WHERE due_at >= $1 AND due_at < $2 AND (due_at, id) > ($3::bigint, $4::text)
          AND ($5::text IS NULL OR tenant = $5)
        ORDER BY due_at, id LIMIT $6)
      UNION ALL (SELECT ${AS_HELD} FROM ${s}.jobs_held
        WHERE due_at >= $1 AND due_at < $2 AND (due_at, id) > ($3::bigint, $4::text)
          AND ($5::text IS NULL OR tenant = $5)
        ORDER BY due_at, id LIMIT $6)
      ORDER BY due_at, id LIMIT $6`,
    /** Claimed jobs are few (work in flight): read and sorted without an index of their own. */
    listClaimed: `SELECT ${AS_CLAIMED} FROM ${s}.jobs_claimed
      WHERE due_at >= $1 AND due_at < $2 AND (due_at, id) > ($3::bigint, $4::text)
        AND ($5::text IS NULL OR tenant = $5)
      ORDER BY due_at, id LIMIT $6`,
    listHistory: `SELECT ${AS_HISTORY} FROM ${s}.jobs_history
      WHERE due_at >= $1 AND due_at < $2 AND (due_at, id) > ($3::bigint, $4::text)
        AND ($5::text IS NULL OR tenant = $5) AND status = ANY($7::text[])
      ORDER BY due_at, id LIMIT $6`,

    /**
     * A node's heartbeat, in one statement: records incarnation $4 of node $1 alive until
     * $2 + ttl $3 (a restart's first heartbeat replaces the incarnation), forgets nodes
     * whose ttl ran out (their leases run out on their own, same ttl, and are taken over by
     * shardsMove), renews its own unexpired leases, and reads the live nodes (itself
     * included, sorted: every node computes the same assignment from it) with their
     * incarnations (the liveness locks to wait on). The tables are tiny (one row per node,
     * one per shard): primary keys only.
     */
    shardHeartbeat: `WITH me AS (
        INSERT INTO ${s}.nodes (node_id, started_at, heartbeat_at, expires_at)
        VALUES ($1, $4::bigint, $2::bigint, $2::bigint + $3::bigint)
        ON CONFLICT (node_id) DO UPDATE SET started_at = excluded.started_at,
          heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at
      ), dead AS (
        DELETE FROM ${s}.nodes WHERE expires_at <= $2::bigint AND node_id <> $1
      ), renewed AS (
        UPDATE ${s}.shard_leases SET expires_at = $2::bigint + $3::bigint
        WHERE owner = $1 AND expires_at > $2::bigint
        RETURNING shard
      ), peers AS (
        SELECT node_id, started_at FROM ${s}.nodes WHERE expires_at > $2::bigint AND node_id <> $1
      )
      SELECT ARRAY(SELECT node_id FROM peers UNION SELECT $1 ORDER BY 1) AS nodes,
             ARRAY(SELECT node_id FROM peers ORDER BY node_id) AS peer_ids,
             ARRAY(SELECT started_at FROM peers ORDER BY node_id) AS peer_started,
             (SELECT array_agg(shard ORDER BY shard) FROM renewed) AS renewed`,
    /**
     * Takeover of a node whose liveness lock was released (node-liveness.ts), if the
     * registry still names that incarnation ($2): its registry row and shard leases go (the
     * shards are free for shardsMove at once) and its claims' leases end now ($3; owners
     * "$1/..."), so the lease sweeper puts them back as it would once they ran out (attempt
     * counted, fence kept). Every node is told to heartbeat ($4: the schema's channel).
     * jobs_claimed holds only work in flight: the owner filter needs no index.
     */
    nodeTakeover: `WITH gone AS (
        DELETE FROM ${s}.nodes WHERE node_id = $1 AND started_at = $2::bigint RETURNING node_id
      ), leases AS (
        DELETE FROM ${s}.shard_leases WHERE owner = $1 AND EXISTS (SELECT 1 FROM gone)
        RETURNING shard
      ), claims AS (
        UPDATE ${s}.jobs_claimed SET lease_expires_at = $3::bigint
        WHERE left(lease_owner, length($1::text) + 1) = $1::text || '/'
          AND lease_expires_at > $3::bigint AND EXISTS (SELECT 1 FROM gone)
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM gone)::int AS gone, (SELECT count(*) FROM leases)::int AS shards,
        (SELECT count(*) FROM claims)::int AS claims,
        (SELECT count(*) FROM (SELECT pg_notify($4, 'nodes') FROM gone) n)::int AS notified`,
    /**
     * Liveness locks (node-liveness.ts), session-level, keyed by (schema, node@incarnation):
     * held by the node, waited for (shared) by its peers. The two-key form never meets the
     * migration and partition locks (one bigint key each).
     */
    livenessHold: `SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS locked`,
    livenessTry: `SELECT pg_try_advisory_lock_shared(hashtext($1), hashtext($2)) AS free`,
    livenessWait: `SELECT pg_advisory_lock_shared(hashtext($1), hashtext($2))`,
    /** A waiting backend notices a vanished client within a second (PostgreSQL 14+). */
    livenessCheckInterval: `SET client_connection_check_interval = 1000`,
    /** A node joined, left or moved shards: every node heartbeats now (shard-leases.ts). */
    nodesChanged: `SELECT pg_notify($1, 'nodes')`,
    /**
     * Moves node $1's leases to its assigned shards $4: releases the others, takes each
     * assigned shard that is free, its own, or whose lease ran out (a dead node's), keeping
     * acquired_at across renewals. The upsert's WHERE is what makes a live lease safe from
     * takeover: a shard changes hands only through a release or an expired lease.
     */
    shardsMove: `WITH rel AS (
        DELETE FROM ${s}.shard_leases WHERE owner = $1 AND NOT (shard = ANY($4::int[]))
        RETURNING shard
      ), held AS (
        INSERT INTO ${s}.shard_leases AS l (shard, owner, expires_at, acquired_at)
        SELECT t, $1, $2::bigint + $3::bigint, $2::bigint FROM unnest($4::int[]) AS t
        ON CONFLICT (shard) DO UPDATE SET owner = excluded.owner,
          expires_at = excluded.expires_at,
          acquired_at = CASE WHEN l.owner = excluded.owner THEN l.acquired_at
                             ELSE excluded.acquired_at END
        WHERE l.owner = excluded.owner OR l.expires_at <= $2::bigint
        RETURNING shard
      )
      SELECT (SELECT array_agg(shard ORDER BY shard) FROM rel) AS released,
             (SELECT array_agg(shard ORDER BY shard) FROM held) AS held`,
    /** A node stopping cleanly: its leases and its registry row go in one statement. */
    shardsLeave: `WITH l AS (DELETE FROM ${s}.shard_leases WHERE owner = $1),
        n AS (DELETE FROM ${s}.nodes WHERE node_id = $1)
      SELECT pg_notify($2, 'nodes')`,
    /**
     * jobs_claimed sees an insert and a delete per fired job: partition maintenance vacuums
     * it every pass so its size stays bounded by (fire rate x interval) instead of waiting
     * for autovacuum's thresholds. SKIP_LOCKED: when another node is vacuuming it, that is
     * enough. (VACUUM cannot run inside a transaction: sent on its own.)
     */
    claimedVacuum: `VACUUM (SKIP_LOCKED) ${s}.jobs_claimed`,
    /**
     * Whether jobs_claimed has dead rows to vacuum (the statistics' count, which lags by a
     * second or so): a VACUUM is several transactions even on an empty table, so an idle
     * node skips it. Unknown (no statistics) counts as yes.
     */
    claimedVacuumNeeded: `SELECT coalesce(n_dead_tup > 0, true) AS needed FROM pg_stat_user_tables
      WHERE relid = '${s}.jobs_claimed'::regclass`,

    /**
     * LISTEN/NOTIFY wake-ups (due-notifier.ts): one channel per schema, a payload of the
     * earliest due time (epoch ms, as text). Channel names are identifiers (63 bytes).
     */
    notifyChannel: `duetime_${schema}`.slice(0, 63),
    listen: `LISTEN "${`duetime_${schema}`.slice(0, 63)}"`,
    notify: `SELECT pg_notify($1, $2)`,

    /**
     * The change feed (changes.ts), in (tx, seq) order: only transactions older than every
     * one still in flight (the snapshot's xmin) are read, so a row whose transaction commits
     * later, whatever its seq, always sorts after the cursor handed out. Primary key
     * (tx, seq), or index job_changes_tenant (tenant, tx, seq) for one tenant. The second
     * column is that xmin: where a page that came back short lets its reader go on from.
     */
    changesAfter: `SELECT c.tx::text AS tx, c.seq, c.tenant, c.job_id, c.kind, c.status, c.due_at,
        c.attempts, c.error, c.at, x.xmin::text AS xmin
      FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) x
      LEFT JOIN LATERAL (
        SELECT * FROM ${s}.job_changes
        WHERE ($1::text IS NULL OR tenant = $1::text) AND (tx, seq) > ($2::xid8, $3::bigint)
          AND tx < x.xmin
        ORDER BY tx, seq LIMIT $4::int
      ) c ON true`,
    changesHead: `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`,
    /**
     * Retention's read: the oldest rows by the primary key, of transactions older than any in
     * flight (a row committing later always sorts after these: deleting up to the last of
     * them can never take one nobody read).
     */
    changesOldest: `SELECT tx::text AS tx, seq, at FROM ${s}.job_changes
      WHERE tx < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY tx, seq LIMIT $1::int`,
    changesDeleteThrough: `DELETE FROM ${s}.job_changes WHERE (tx, seq) <= ($1::xid8, $2::bigint)`,
    purgedThroughGet: `SELECT value FROM ${s}.meta WHERE name = 'changes_purged_through'`,
    purgedThroughSet: `INSERT INTO ${s}.meta (name, value) VALUES ('changes_purged_through', $1)
      ON CONFLICT (name) DO UPDATE SET value = excluded.value`,

    /**
     * Row-by-row purge, only for what partition drops leave (index jobs_history_finished);
     * the rows' tag entries go in the same statement.
     */
    historyDeleteOldest: `WITH gone AS (
        DELETE FROM ${s}.jobs_history h USING (
          SELECT shard, id, finished_at FROM ${s}.jobs_history WHERE finished_at < $1
          ORDER BY finished_at LIMIT $2
        ) o
        WHERE h.finished_at < $1 AND h.shard = o.shard AND h.id = o.id
          AND h.finished_at = o.finished_at
        RETURNING h.tenant, h.id, h.tags
      ), untagged AS (
        DELETE FROM ${s}.job_tags t USING gone
          CROSS JOIN LATERAL json_array_elements_text(gone.tags::json) AS g(tag)
        WHERE gone.tags IS NOT NULL AND t.tenant = gone.tenant AND t.tag = g.tag
          AND t.job_id = gone.id
      )
      SELECT count(*)::int AS n FROM gone`,

    /**
     * A page of a tag: at most $4 entries of job_tags' primary key range after $3, each
     * entry's job found where it is: jobs_claimed by primary key, jobs_live by primary key in
     * the one partition its due time names (run-time pruning on the entry's due_at), else
     * jobs_history by primary key prefix in each history partition (few: retention bounds
     * them). One statement, one snapshot: a job moving meanwhile is seen in one table.
     */
    tagPage: `SELECT j.* FROM (
        SELECT job_id, shard, due_at FROM ${s}.job_tags
        WHERE tenant = $1 AND tag = $2 AND job_id > $3
        ORDER BY job_id LIMIT $4
      ) t
      CROSS JOIN LATERAL (${tagJob(s)}) j
      ORDER BY t.job_id`,
    /**
     * A tag's matching jobs counted over its entries: the due range from the entries alone;
     * the status, when asked for, from where each entry's job is (as tagPage finds it).
     */
    tagCount: `SELECT count(*)::bigint AS n FROM ${s}.job_tags t
      WHERE t.tenant = $1 AND t.tag = $2 AND t.due_at >= $3 AND t.due_at < $4
        AND ($5::text[] IS NULL OR (SELECT j.status FROM (${tagJob(s)}) j) = ANY ($5::text[]))`,
  } as const;
}

/** The job of tag entry `t` (job_id, shard, due_at), from whichever table holds it. */
export function tagJob(s: string): string {
  return `SELECT ${AS_CLAIMED} FROM ${s}.jobs_claimed c WHERE c.shard = t.shard AND c.id = t.job_id
    UNION ALL SELECT ${AS_PENDING} FROM ${s}.jobs_live l
      WHERE l.shard = t.shard AND l.id = t.job_id AND l.due_at = t.due_at
    UNION ALL SELECT ${AS_HISTORY} FROM ${s}.jobs_history h
      WHERE h.shard = t.shard AND h.id = t.job_id
    UNION ALL SELECT ${AS_HELD} FROM ${s}.jobs_held d WHERE d.shard = t.shard AND d.id = t.job_id
    LIMIT 1`;
}

/**
 * A claim: the rows `due` selects (tableoid and ctid, locked) move from jobs_live to
 * jobs_claimed with the lease ($3 owner, $4 now, $6 lease ms), fence + 1 and attempts + 1.
 * Each row says whether a pause held when the statement began (`paused`, one probe of
 * pauses_open per statement): then claim.ts holds the covered ones (pauses.ts) instead.
 */
/** claimDue's read: the due prefix of (due_at, id), SKIP LOCKED, with `more` columns. */
function duePrefix(s: string, more: string): string {
  return `SELECT tableoid, ctid${more} FROM ${s}.jobs_live
        WHERE due_at <= $1::bigint AND ($5::int[] IS NULL OR shard = ANY($5::int[]))
        ORDER BY due_at, id
        LIMIT $2::int
        FOR UPDATE SKIP LOCKED`;
}

/**
 * The move of the rows `due` names to jobs_claimed, with their change feed rows. `alone`
 * (claimDueAlone): gated on no row of `due` being a series occurrence and, when `due` has
 * rows, no pause open, one row coming back even when nothing moved. An empty due prefix
 * has nothing a pause could cover, so an idle claim stays one statement while a pause is
 * open (as SQLite's holdCovered reads the pauses only when there are rows): a paused
 * tenant's idle node ran BEGIN, claimDue and COMMIT after it on every poll
 * (bench/postgres-paused-idle.ts, 14 statements a minute against 11).
 */
function claimMoving(s: string, due: string, alone = false): string {
  const gate = alone
    ? `, alone AS (
      SELECT NOT (EXISTS (SELECT 1 FROM due WHERE schedule_id IS NOT NULL)
        OR (EXISTS (SELECT 1 FROM due) AND ${ANY_PAUSED(s)})) AS ok
    )`
    : "";
  const answer = alone
    ? `SELECT c.*, a.ok AS alone FROM alone a LEFT JOIN (SELECT ${AS_CLAIMED} FROM claimed) c ON true`
    : `SELECT ${AS_CLAIMED}, ${ANY_PAUSED(s)} AS paused FROM claimed`;
  return `WITH due AS (
      ${due}
    )${gate}, moved AS (
      DELETE FROM ${s}.jobs_live l USING due
      WHERE l.due_at <= $1::bigint
        AND l.ctid = ANY (ARRAY(SELECT ctid FROM due))
        AND l.tableoid = due.tableoid AND l.ctid = due.ctid${alone ? " AND (SELECT ok FROM alone)" : ""}
      RETURNING l.*
    ), claimed AS (
      INSERT INTO ${s}.jobs_claimed (${COLS}, lease_owner, lease_expires_at)
      SELECT shard, id, tenant, key, due_at, bucket, payload, target, target_options,
        trace_context, attempts + 1, max_attempts, expire_after_ms, version + 1, fence + 1,
        last_error, last_result, created_at, $4::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of, $3::text,
        $4::bigint + $6::bigint
      FROM moved
      RETURNING *
    ), changed AS (
      INSERT INTO ${s}.job_changes (${CHANGE_COLS})
      SELECT tenant, id, 'claimed', 'claimed', due_at, attempts, NULL, $4::bigint FROM claimed
    )
    ${answer}`;
}
