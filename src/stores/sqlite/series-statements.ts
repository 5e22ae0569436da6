/**
 * The SQLite statements of recurring series (see series.ts), merged into statements.ts's SQL.
 * A series is one row of `schedules` (primary key id, a ULID: rows append in creation order).
 */
import { SCHEDULE_COLUMNS } from "../../store/schedule-row.js";

const COLUMNS = SCHEDULE_COLUMNS.join(", ");
const PLACEHOLDERS = SCHEDULE_COLUMNS.map((c) => `@${c}`).join(", ");
const ASSIGN = SCHEDULE_COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = @${c}`)
  .join(", ");

export const SERIES_SQL = {
  /** A new series; the unique index schedules_key refuses a key its tenant already holds. */
  scheduleInsert: `INSERT INTO schedules (${COLUMNS}) VALUES (${PLACEHOLDERS})`,
  /** Primary key. */
  scheduleById: `SELECT ${COLUMNS} FROM schedules WHERE id = ?`,
  /** Partial unique index schedules_key (tenant, key). */
  scheduleByKey: `SELECT ${COLUMNS} FROM schedules WHERE tenant = ? AND key = ?`,
  /** Writes every column of a series read in the same transaction (primary key). */
  scheduleWrite: `UPDATE schedules SET ${ASSIGN} WHERE id = @id`,
  /**
   * A claim's series step (series-advance.ts): the series of @series (a JSON array of ids)
   * whose pending occurrence is one of @jobs (claimed job ids), in groups that step alike
   * (GroupTuple's columns; `ends`: this occurrence reaches the count), each group's ids as
   * a JSON array. One look-up per id on the primary key, whatever the number stored; the
   * grouping sorts the batch's rows (a claim's worth) in SQLite, and JavaScript gets a few
   * rows instead of 24 columns of each.
   */
  seriesStepGroups: `SELECT tenant, target, rule_kind, rule, time_zone, gap, overlap, start_at,
      end_at, misfire, misfire_limit, misfire_tolerance_ms, expire_after_ms, next_at,
      catch_up_fired, max_count IS NOT NULL AND fired_count + 1 >= max_count AS ends,
      json_group_array(id) AS ids
    FROM schedules
    WHERE id IN (SELECT value FROM json_each(@series))
      AND next_job_id IN (SELECT value FROM json_each(@jobs))
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16`,
  /**
   * A group's series advanced: @next maps each series id to [next job id, shard] (null when
   * the series ends); the counters move in SQL (every SET reads the row as it was, so
   * last_job_id takes the claimed occurrence's id), @lastMisfireAt null leaves it as it is.
   * One primary-key look-up per entry; only advance columns change, so no index entry moves.
   */
  seriesAdvanceGroup: `UPDATE schedules SET state = @state, next_job_id = n.value ->> 0,
      next_at = @nextAt, next_nominal = @nominal, fired_count = fired_count + 1,
      missed_count = missed_count + @missed,
      last_misfire_at = coalesce(@lastMisfireAt, last_misfire_at), catch_up_fired = @catchUp,
      last_job_id = next_job_id, updated_at = @now
    FROM json_each(@next) AS n WHERE schedules.id = n.key`,
  /**
   * A group's next occurrences (the series of @next that go on), each job's template copied
   * from its series row (core/series.ts occurrenceJob: no key, tags or callbacks). New rows
   * take the next rowids (see insert-statements.ts jobInsertRows).
   */
  occurrencesInsert: `INSERT INTO jobs (id, tenant, key, due_at, bucket, shard, payload, target,
      target_options, max_attempts, expire_after_ms, created_at, updated_at, trace_context,
      schedule_id, nominal, tags, callbacks, callback_of)
    SELECT n.value ->> 0, s.tenant, NULL, @dueAt, @bucket, n.value ->> 1, s.payload, s.target,
      s.target_options, s.max_attempts, @expireAfterMs, @now, @now, NULL, s.id, @nominal, NULL,
      NULL, NULL
    FROM json_each(@next) AS n JOIN schedules AS s ON s.id = n.key`,
  /** The jobs just inserted, after a seq (a rowid range): held by a pause (rare). */
  jobsSeqIdAfter: `SELECT seq, id FROM jobs WHERE seq > ? ORDER BY seq`,
  /** The jobs just inserted, after a seq, into the hot index (their bucket is staged). */
  hotInsertJobsAfter: `INSERT OR IGNORE INTO hot (due_at, seq, tenant)
    SELECT due_at, seq, tenant FROM jobs WHERE seq > ?`,
  /**
   * A claim's series step for a series that cannot be advanced (its rule: series-advance.ts):
   * ended with the reason, the claimed occurrence (its pending one) counted as its last.
   * Rare: one statement per series.
   */
  scheduleBreak: `UPDATE schedules SET state = 'ended', next_job_id = NULL, next_at = NULL,
    next_nominal = NULL, fired_count = fired_count + 1, last_job_id = next_job_id,
    ended_reason = @reason, updated_at = @now WHERE id = @id`,
  /**
   * A cancel's series step for a series that cannot be advanced: ended with the reason; the
   * cancelled occurrence is not counted as fired (it never fired).
   */
  scheduleBreakOnCancel: `UPDATE schedules SET state = 'ended', next_job_id = NULL,
    next_at = NULL, next_nominal = NULL, version = version + 1, ended_reason = @reason,
    updated_at = @now WHERE id = @id`,
  scheduleDelete: `DELETE FROM schedules WHERE id = ?`,
  /**
   * A page of series in id order: the primary key after @after, or index schedules_tenant
   * (tenant, id) with a tenant; the state is checked per row (a page reads at most the rows
   * up to its last match).
   */
  schedulesPage: `SELECT ${COLUMNS} FROM schedules
    WHERE id > @after AND (@tenant IS NULL OR tenant = @tenant)
      AND (@state IS NULL OR state = @state)
    ORDER BY id LIMIT @limit`,
} as const;
