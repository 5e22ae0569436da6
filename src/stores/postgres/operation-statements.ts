import { OPERATION_COLUMNS } from "../../store/operation-row.js";
import { CHANGE_COLS, COLS } from "./job-columns.js";
import {
  deleteProbed,
  deletePendingBatch,
  movePendingBatch,
  probed,
  selectProbed,
} from "./pending-rows.js";
import { tagJob } from "./statements.js";

/**
 * The statements of bulk operations for one schema (operations.ts). A batch's actions take
 * the jobs it decided on as arrays ($1 shards, $2 ids) and are the set forms of the
 * single-job transitions in statements.ts (cancel, reschedule, retryDead): the same rows
 * move between the same tables (a held job's stays held, its pause's count following:
 * pending-rows.ts), with the same change-feed rows, and the statement triggers keep the
 * counters. Each also names the tenant and leaves a series' pending occurrence
 * (schedule_id set) alone, as the batch's decision did.
 */
export function operationStatements(schema: string) {
  const s = `"${schema}"`;
  const cols = OPERATION_COLUMNS.join(", ");
  const params = OPERATION_COLUMNS.map((_, i) => `$${i + 1}`).join(", ");
  const assign = OPERATION_COLUMNS.map((c, i) => `${c} = $${i + 1}`)
    .filter((_, i) => i > 0)
    .join(", ");
  const picked = `unnest($1::int[], $2::text[]) AS u(shard, id)`;
  /** The batch's jobs with the due time it read of each (parameter `due`). */
  const pickedDue = (due: string) =>
    `unnest($1::int[], $2::text[], ${due}::bigint[]) AS u(shard, id, due_at)`;
  /** CTE dead_at: the batch's dead jobs of tenant $3, one probe of jobs_history each. */
  const deadAt = probed(
    s,
    "dead_at",
    "jobs_history",
    picked,
    "j.status = 'dead' AND j.tenant = $3",
  );
  const side = (table: string, status: string) => `(SELECT shard, id, ${status} AS status,
      target, key, due_at, schedule_id, tags FROM ${s}.${table}
    WHERE tenant = $1 AND (shard, id) > ($2::int, $3::text) ORDER BY shard, id LIMIT $4)`;
  return {
    /** Partial unique index operations_key: a key its tenant holds makes this a no-op. */
    insert: `INSERT INTO ${s}.operations (${cols}) VALUES (${params})
      ON CONFLICT (tenant, key) WHERE key IS NOT NULL DO NOTHING RETURNING id`,
    /** Primary key. */
    byId: `SELECT ${cols} FROM ${s}.operations WHERE id = $1`,
    /** operations_key. */
    byKey: `SELECT ${cols} FROM ${s}.operations WHERE tenant = $1 AND key = $2`,
    /** Primary key, locked: a batch and a cancel of one operation take turns. */
    byIdLocked: `SELECT ${cols} FROM ${s}.operations WHERE id = $1 FOR UPDATE`,
    write: `UPDATE ${s}.operations SET ${assign} WHERE id = $1`,
    /** Newest first: the primary key backwards, or operations_tenant; states per row. */
    page: `SELECT ${cols} FROM ${s}.operations
      WHERE id < $1 AND ($2::text IS NULL OR tenant = $2)
        AND ($3::text[] IS NULL OR state = ANY($3::text[]))
      ORDER BY id DESC LIMIT $4`,
    /**
     * A batch's jobs: one tenant's, after the (shard, id) cursor, in that order, from each
     * job table's primary key (shard, id, ...): a job keeps its shard and id through every
     * transition, so a batch never meets a job an earlier batch met. One statement, one
     * snapshot: a job is in exactly one of the four tables (a held job's, jobs_held, is
     * pending).
     */
    jobs: `SELECT * FROM (${side("jobs_live", "'pending'::text")}
      UNION ALL ${side("jobs_held", "'pending'::text")}
      UNION ALL ${side("jobs_claimed", "'claimed'::text")}
      UNION ALL ${side("jobs_history", "status")}) j
      ORDER BY shard, id LIMIT $4`,
    /**
     * A tag-filtered batch's jobs (operations.ts walkedTag): one tenant's entries of tag $2
     * in job_tags after job id $3, at most $4, each entry's job from wherever it is (as
     * tagPage finds it). A job keeps its id and entries through every move, so no batch
     * meets a job an earlier one met; the cost tracks the tag's entries, not the backlog.
     */
    tagJobs: `SELECT j.shard, j.id, j.status, j.target, j.key, j.due_at, j.schedule_id, j.tags
      FROM (
        SELECT job_id, shard, due_at FROM ${s}.job_tags
        WHERE tenant = $1 AND tag = $2 AND job_id > $3
        ORDER BY job_id LIMIT $4
      ) t
      CROSS JOIN LATERAL (${tagJob(s)}) j
      ORDER BY t.job_id`,
    /**
     * cancel's set form. $3 tenant, $4 now, $5 the due times the batch read (each job found
     * by primary key: pending-rows.ts deletePendingBatch).
     */
    cancel: `WITH ${deletePendingBatch(s, {
      picked: pickedDue("$5"),
      where: "j.tenant = $3 AND j.schedule_id IS NULL",
    })}, moved AS (
        INSERT INTO ${s}.jobs_history (${COLS}, status, finished_at)
        SELECT shard, id, tenant, key, due_at, bucket, payload, target, target_options,
          trace_context, attempts, max_attempts, expire_after_ms, version + 1, fence, last_error,
          last_result, created_at, $4::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of, 'cancelled', $4::bigint
        FROM del
        RETURNING tenant, id, due_at, attempts
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'cancelled', 'cancelled', due_at, attempts, NULL, $4::bigint FROM moved
      )
      SELECT count(*)::int AS n FROM moved`,
    /**
     * reschedule's set form: $3 new due times, $4 their buckets, $5 tenant, $6 now, $7 the due
     * times the batch read (each job found by one index probe: pending-rows.ts
     * movePendingBatch).
     */
    reschedule: `WITH ${movePendingBatch(s, {
      picked: `unnest($1::int[], $2::text[], $7::bigint[], $3::bigint[], $4::bigint[])
        AS u(shard, id, due_at, due, bucket)`,
      where: "j.tenant = $5 AND j.schedule_id IS NULL",
      extra: "u.due AS new_due, u.bucket AS new_bucket",
      values: `shard, id, tenant, key, new_due, new_bucket, payload, target, target_options,
          trace_context, attempts, max_attempts, expire_after_ms, version + 1, fence, last_error,
          last_result, created_at, $6::bigint, fired_at, schedule_id, nominal, tags, callbacks,
          callback_of`,
    })}, changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'rescheduled', 'pending', due_at, attempts, NULL, $6::bigint FROM moved
      )
      SELECT count(*)::int AS n FROM moved`,
    /**
     * retryKeyTake's set form, before retry in the same transaction. $3 tenant. The dead rows
     * are found as retry finds them (deadAt). As a join of the batch with jobs_history it was
     * planned as a Seq Scan of the history (EXPLAIN ANALYZE, 100 dead jobs among 10,100
     * finished: all 10,100 read).
     */
    retryKeysTake: `WITH ${deadAt} INSERT INTO ${s}.job_keys (tenant, key, shard, id)
      ${selectProbed(s, "jobs_history", "dead_at", "j.key IS NOT NULL", "j.tenant, j.key, j.shard, j.id")}
      ON CONFLICT (tenant, key) DO NOTHING`,
    /**
     * retryDead's set form: a dead job whose key another live job holds (retryKeysTake left
     * it to the holder) stays dead. $3 tenant, $4 due time, $5 its bucket, $6 now. Each dead
     * row is found by one probe of jobs_history's primary key prefix (shard, id) per history
     * partition (deadAt) and deleted by (tableoid, ctid).
     */
    retry: `WITH ${deadAt}, del AS (
        ${deleteProbed(
          s,
          "jobs_history",
          "dead_at",
          `(j.key IS NULL OR EXISTS (SELECT 1 FROM ${s}.job_keys k
            WHERE k.tenant = j.tenant AND k.key = j.key AND k.id = j.id))`,
          "j.*",
        )}
      ), ins AS (
        INSERT INTO ${s}.jobs_live (${COLS})
        SELECT shard, id, tenant, key, $4::bigint, $5::bigint, payload, target, target_options,
          trace_context, 0, max_attempts, expire_after_ms, version + 1, fence, last_error,
          last_result, created_at, $6::bigint, fired_at, schedule_id, nominal, tags, callbacks, callback_of
        FROM del
        RETURNING tenant, id, due_at, attempts
      ), changed AS (
        INSERT INTO ${s}.job_changes (${CHANGE_COLS})
        SELECT tenant, id, 'retried', 'pending', due_at, attempts, NULL, $6::bigint FROM ins
      )
      SELECT count(*)::int AS n FROM ins`,
    /**
     * erase: pending and finished rows deleted with their key, their tag entries and their
     * feed rows; the statement triggers drop the counters. $3 tenant, $4 the due times the
     * batch read. Every row is reached by an index, one probe per job (or per tag entry),
     * whatever the planner thinks of the batch's size: a pending row by one index probe
     * (deletePendingBatch), a finished one by jobs_history's primary key prefix (shard, id)
     * in each history partition; the tag entries by job_tags' whole primary key (tenant,
     * tag, job_id), a probe per tag of the job's JSON; the key by job_keys' (tenant, key);
     * the feed rows by job_changes_job (job_id = ANY of the batch's ids). As joins, the
     * tags' and the feed's deletes were free to hash the batch and scan the tables.
     */
    erase: `WITH ${deletePendingBatch(s, {
      picked: pickedDue("$4"),
      where: "j.tenant = $3 AND j.schedule_id IS NULL",
    })}, ${probed(s, "hist_at", "jobs_history", picked, "j.tenant = $3")}, hist AS (
        ${deleteProbed(s, "jobs_history", "hist_at", "j.tenant = $3", "j.id, j.key, j.tags")}
      ), gone AS (
        SELECT id, key, tags FROM del UNION ALL SELECT id, key, tags FROM hist
      ), tags_at AS (
        SELECT f.ctid FROM gone g
        CROSS JOIN LATERAL json_array_elements_text(g.tags::json) AS x(tag)
        CROSS JOIN LATERAL (SELECT t.ctid FROM ${s}.job_tags t
          WHERE t.tenant = $3 AND t.tag = x.tag AND t.job_id = g.id LIMIT 1) f
        WHERE g.tags IS NOT NULL
      ), untagged AS (
        DELETE FROM ${s}.job_tags t WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM tags_at))
      ), keys_at AS (
        SELECT f.ctid FROM gone g
        CROSS JOIN LATERAL (SELECT k.ctid FROM ${s}.job_keys k
          WHERE k.tenant = $3 AND k.key = g.key AND k.id = g.id LIMIT 1) f
        WHERE g.key IS NOT NULL
      ), keys AS (
        DELETE FROM ${s}.job_keys k WHERE k.ctid = ANY (ARRAY(SELECT ctid FROM keys_at))
      ), feed AS (
        DELETE FROM ${s}.job_changes c
        WHERE c.job_id = ANY (ARRAY(SELECT id FROM gone)) AND c.tenant = $3
      )
      SELECT count(*)::int AS n FROM gone`,
  } as const;
}

export type OperationStatements = ReturnType<typeof operationStatements>;
