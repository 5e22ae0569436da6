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
/** The advance columns but the id, each set from a parameter in that order; the id last. */
const ADVANCE_SET = SCHEDULE_ADVANCE_COLUMNS.filter((c) => c !== "id")
  .map((c) => `${c} = ?`)
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
   * The series of a claim's occurrences, in one read: the JSON array of ids joined to the
   * primary key (one look-up per id, whatever the number of series stored).
   */
  schedulesByIds: `SELECT ${COLUMNS} FROM schedules
    WHERE id IN (SELECT value FROM json_each(?))`,
  /**
   * A claim's series step (store/series-step.ts), one advanced series: its
   * SCHEDULE_ADVANCE_COLUMNS (scheduleAdvanceValues) with the id moved last, by primary key.
   * Its columns only, so no index entry moves. One run per series: 500 of them cost 2.8 ms
   * of CPU against 4.1-6.1 ms for one UPDATE ... FROM json_each of the batch, whose every
   * column was a JSON extraction (scratch measurement on a store of 2,000 series).
   */
  scheduleAdvance: `UPDATE schedules SET ${ADVANCE_SET} WHERE id = ?`,
  /**
   * A claim's series step for a series that cannot be advanced (core/series.ts stepSeries):
   * ended with the reason, the claimed occurrence counted as its last; reads nothing of the
   * row, so a row too corrupt to read is ended too. Rare: one statement per series.
   */
  scheduleBreak: `UPDATE schedules SET state = 'ended', next_job_id = NULL, next_at = NULL,
    next_nominal = NULL, fired_count = fired_count + 1, last_job_id = @jobId,
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
