/**
 * The SQLite statements of recurring series (see series.ts), merged into statements.ts's SQL.
 * A series is one row of `schedules` (primary key id, a ULID: rows append in creation order).
 */
import { SCHEDULE_ADVANCE_COLUMNS, SCHEDULE_COLUMNS } from "../../store/schedule-row.js";

const COLUMNS = SCHEDULE_COLUMNS.join(", ");
const PLACEHOLDERS = SCHEDULE_COLUMNS.map((c) => `@${c}`).join(", ");
const ASSIGN = SCHEDULE_COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = @${c}`)
  .join(", ");

/**
 * The columns of a series the claim's row-wise step reads, in this order (seriesStepRows;
 * series-rows.ts reads them by place): what advanceStep decides on, the rule, and the
 * template a next occurrence is written from.
 */
export const SERIES_STEP_COLUMNS = [
  "id",
  "tenant",
  "rule_kind",
  "rule",
  "time_zone",
  "gap",
  "overlap",
  "start_at",
  "end_at",
  "misfire",
  "misfire_limit",
  "misfire_tolerance_ms",
  "max_count",
  "next_job_id",
  "next_at",
  "fired_count",
  "missed_count",
  "last_misfire_at",
  "catch_up_fired",
  "target",
  "payload",
  "target_options",
  "max_attempts",
  "expire_after_ms",
] as const;

/** The advance columns but the id (store/schedule-row.ts), each a parameter in order. */
const ADVANCE_SET = SCHEDULE_ADVANCE_COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = ?`)
  .join(", ");

/**
 * A series' next job in the JSON object of a claim's set-wise step (series-advance.ts
 * nextIds), entry `n` of json_each: its id, or [id, shard] on a file of several shards.
 * Plain ids keep the object half the size (SQLite parses it once per statement).
 */
const NEXT_JOB_ID = "CASE n.type WHEN 'array' THEN n.value ->> 0 ELSE n.value END";
const NEXT_SHARD = "CASE n.type WHEN 'array' THEN n.value ->> 1 ELSE 0 END";

/**
 * 1 when a series' template (payload, target_options) is JSON that decodes: the step copies
 * it into the next occurrence as text, where a job that does not decode would make every
 * claim reaching it throw. Not 1 (rare): series-rows.ts templateBreak decodes it in JavaScript
 * as the per-row step did (SQLite's parser also refuses nesting deeper than 1000).
 */
const DECODES = "json_valid(payload) AND (target_options IS NULL OR json_valid(target_options))";

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
   * A claim's row-wise series step (series-rows.ts): the series of a JSON array of ids, the
   * SERIES_STEP_COLUMNS of each and DECODES last, one primary-key look-up per id whatever the
   * number stored.
   */
  seriesStepRows: `SELECT ${SERIES_STEP_COLUMNS.join(", ")}, ${DECODES} AS decodes FROM schedules
    WHERE id IN (SELECT value FROM json_each(?))`,
  /**
   * The row-wise step's write of one series: its SCHEDULE_ADVANCE_COLUMNS but the id, in
   * that order, then the id, by primary key (positional: named parameters cost about 1 us
   * more a run). Its columns only, so no index entry moves.
   */
  scheduleAdvance: `UPDATE schedules SET ${ADVANCE_SET} WHERE id = ?`,
  /**
   * A claim's set-wise series step (series-advance.ts): the series of a JSON object of
   * series id to claimed job id, each only while that job is its pending occurrence, in
   * groups that step alike (GroupTuple's columns; `ends`: this occurrence reaches the count;
   * `decodes`: DECODES),
   * each group's ids as a JSON array. One look-up per entry on the primary key; the grouping
   * sorts the rows (a claim's worth) in SQLite, and JavaScript gets a row a group instead of
   * 24 columns of each series. (The pairs cost ~0.35 us a series less than `id IN` one array
   * and `next_job_id IN` another, isolated.)
   */
  seriesStepGroups: `SELECT tenant, target, rule_kind, rule, time_zone, gap, overlap, start_at,
      end_at, misfire, misfire_limit, misfire_tolerance_ms, expire_after_ms, next_at,
      catch_up_fired, max_count IS NOT NULL AND fired_count + 1 >= max_count AS ends,
      ${DECODES} AS decodes, json_group_array(s.id) AS ids
    FROM json_each(?) AS p JOIN schedules AS s ON s.id = p.key AND s.next_job_id = p.value
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17`,
  /**
   * A group's series advanced. Parameters in order: state, next_at, next_nominal, missed
   * (added to missed_count), last_misfire_at (null: as it is), catch_up_fired, now, and the
   * JSON object of each series id to its next job (NEXT_JOB_ID; null when it ends). The
   * counters move in SQL; every SET reads the row as it was, so last_job_id takes the
   * claimed occurrence's id. One primary-key look-up per entry; only advance columns change.
   */
  seriesAdvanceGroup: `UPDATE schedules SET state = ?, next_job_id = ${NEXT_JOB_ID},
      next_at = ?, next_nominal = ?, fired_count = fired_count + 1,
      missed_count = missed_count + ?, last_misfire_at = coalesce(?, last_misfire_at),
      catch_up_fired = ?, last_job_id = next_job_id, updated_at = ?
    FROM json_each(?) AS n WHERE schedules.id = n.key`,
  /**
   * A group's next occurrences, each job's template copied from its series row
   * (core/series.ts occurrenceJob: no key, tags or callbacks). Parameters in order: due_at,
   * bucket, expire_after_ms, now, now, nominal, and seriesAdvanceGroup's JSON object (the
   * series that go on). New rows take the next rowids (insert-statements.ts jobInsertRows).
   */
  occurrencesInsert: `INSERT INTO jobs (id, tenant, key, due_at, bucket, shard, payload,
      target, target_options, max_attempts, expire_after_ms, created_at, updated_at,
      trace_context, schedule_id, nominal, tags, callbacks, callback_of)
    SELECT ${NEXT_JOB_ID}, s.tenant, NULL, ?, ?, ${NEXT_SHARD}, s.payload, s.target,
      s.target_options, s.max_attempts, ?, ?, ?, NULL, s.id, ?, NULL, NULL, NULL
    FROM json_each(?) AS n JOIN schedules AS s ON s.id = n.key`,
  /** The jobs inserted in a rowid range (after, last]: held by a pause (rare). */
  jobsSeqIdRange: `SELECT seq, id FROM jobs WHERE seq > ? AND seq <= ? ORDER BY seq`,
  /** The jobs inserted in a rowid range (after, last], into the hot index (bucket staged). */
  hotInsertJobsRange: `INSERT OR IGNORE INTO hot (due_at, seq, tenant)
    SELECT due_at, seq, tenant FROM jobs WHERE seq > ? AND seq <= ?`,
  /**
   * A claim's series step for a series that cannot be advanced (its rule, or a template that
   * does not decode: series-advance.ts, series-rows.ts templateBreak):
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
