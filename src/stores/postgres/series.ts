import type pg from "pg";
import { shardOf } from "../../core/ids.js";
import type { Job, NewJob } from "../../core/job.js";
import { skipOccurrence, stepSeries, type Schedule } from "../../core/series.js";
import {
  rowToSchedule,
  SCHEDULE_ADVANCE_COLUMNS,
  SCHEDULE_COLUMNS,
  scheduleAdvanceValues,
  scheduleRowValues,
  scheduleToRow,
  type ScheduleRow,
} from "../../store/schedule-row.js";
import { claimedOccurrences, stepClaimedSeries } from "../../store/series-step.js";
import type {
  ScheduleChangeResult,
  ScheduleDeleteParams,
  ScheduleReplaceParams,
  SchedulesListParams,
} from "../../store/store.js";
import type { PauseStatements } from "./pause-statements.js";
import { holdInserted, type InsertedRow } from "./pauses.js";
import { insertArrays, placeJobs, rowToJob, type JobRow } from "./rows.js";
import type { Statements } from "./statements.js";

/** The PostgreSQL type of each column a claim's series step writes (migrations.ts). */
const ADVANCE_TYPES: Readonly<Record<string, string>> = {
  id: "text",
  state: "text",
  next_job_id: "text",
  next_at: "bigint",
  next_nominal: "text",
  fired_count: "integer",
  missed_count: "integer",
  last_misfire_at: "bigint",
  catch_up_fired: "integer",
  last_job_id: "text",
  updated_at: "bigint",
};

/** The statements of recurring series for one schema (src/core/series.ts). */
export function seriesStatements(schema: string) {
  const s = `"${schema}"`;
  const cols = SCHEDULE_COLUMNS.join(", ");
  const params = SCHEDULE_COLUMNS.map((_, i) => `$${i + 1}`).join(", ");
  const assign = SCHEDULE_COLUMNS.map((c, i) => `${c} = $${i + 1}`)
    .filter((_, i) => i > 0)
    .join(", ");
  const advanceSet = SCHEDULE_ADVANCE_COLUMNS.filter((c) => c !== "id")
    .map((c) => `${c} = v.${c}`)
    .join(", ");
  const advanceArrays = SCHEDULE_ADVANCE_COLUMNS.map((c, i) => `$${i + 1}::${ADVANCE_TYPES[c]}[]`);
  return {
    /** Partial unique index schedules_key: a key its tenant holds makes this a no-op. */
    insert: `INSERT INTO ${s}.schedules (${cols}) VALUES (${params})
      ON CONFLICT (tenant, key) WHERE key IS NOT NULL DO NOTHING RETURNING id`,
    /** Primary key. */
    byId: `SELECT ${cols} FROM ${s}.schedules WHERE id = $1`,
    /** Primary key, locked: whoever changes a series (a claim included) holds its row. */
    byIdLocked: `SELECT ${cols} FROM ${s}.schedules WHERE id = $1 FOR UPDATE`,
    /** The series of claimed occurrences, locked in id order (no deadlock between claimers). */
    byIdsLocked: `SELECT ${cols} FROM ${s}.schedules WHERE id = ANY($1::text[])
      ORDER BY id FOR UPDATE`,
    byKey: `SELECT ${cols} FROM ${s}.schedules WHERE tenant = $1 AND key = $2`,
    /** Every column of a series locked in the same transaction (primary key). */
    write: `UPDATE ${s}.schedules SET ${assign} WHERE id = $1`,
    /**
     * A claim's series step for the whole batch (store/series-step.ts): one array per column
     * of SCHEDULE_ADVANCE_COLUMNS, unnested and joined to the primary key; its columns only,
     * the rows locked by the claim (byIdsLocked).
     */
    advance: `UPDATE ${s}.schedules AS t SET ${advanceSet}
      FROM unnest(${advanceArrays.join(", ")}) AS v(${SCHEDULE_ADVANCE_COLUMNS.join(", ")})
      WHERE t.id = v.id`,
    /** A series the claim cannot advance, ended with the reason (core/series.ts stepSeries). */
    break: `UPDATE ${s}.schedules SET state = 'ended', next_job_id = NULL, next_at = NULL,
      next_nominal = NULL, fired_count = fired_count + 1, last_job_id = $2,
      ended_reason = $3, updated_at = $4 WHERE id = $1`,
    /** A cancel's step for a series that cannot be advanced: ended, nothing counted fired. */
    breakOnCancel: `UPDATE ${s}.schedules SET state = 'ended', next_job_id = NULL,
      next_at = NULL, next_nominal = NULL, version = version + 1, ended_reason = $2,
      updated_at = $3 WHERE id = $1`,
    delete: `DELETE FROM ${s}.schedules WHERE id = $1`,
    /** Primary key after $1, or index schedules_tenant (tenant, id); the state per row. */
    page: `SELECT ${cols} FROM ${s}.schedules
      WHERE id > $1 AND ($2::text IS NULL OR tenant = $2) AND ($3::text IS NULL OR state = $3)
      ORDER BY id LIMIT $4`,
  } as const;
}

export type SeriesStatements = ReturnType<typeof seriesStatements>;

/** What the series operations need of the store, inside one transaction's client. */
export interface SeriesDeps {
  readonly sql: Statements;
  readonly series: SeriesStatements;
  readonly pauses: PauseStatements;
  readonly bucketWidthMs: number;
  readonly shardCount: number;
}

/**
 * Writes occurrences; those an active pause covers are held at once (as a job scheduled
 * while paused is), so a series' new occurrence is held like the one it follows.
 */
async function insertJob(c: pg.ClientBase, d: SeriesDeps, jobs: NewJob[], now: number) {
  if (jobs.length === 0) return;
  const place = placeJobs(jobs, d.bucketWidthMs, d.shardCount);
  const { rows } = await c.query<InsertedRow>(d.sql.liveInsert, insertArrays(jobs, place, now));
  if (rows.length === 0) return;
  const byId = new Map(jobs.map((j) => [j.id, { ...j, tags: j.tags ?? [] }]));
  await holdInserted(c, d.pauses, rows, byId, now);
}

async function cancelPending(c: pg.ClientBase, d: SeriesDeps, id: string, now: number) {
  await c.query(d.sql.cancel, [shardOf(id, d.shardCount), id, null, now]);
}

export async function insertSchedule(
  c: pg.ClientBase,
  d: SeriesDeps,
  p: { schedule: Schedule; job: NewJob | null; now: number },
): Promise<{ schedule: Schedule; created: boolean }> {
  const { rows } = await c.query(d.series.insert, scheduleRowValues(scheduleToRow(p.schedule)));
  if (rows.length === 0) {
    const held = await c.query<ScheduleRow>(d.series.byKey, [p.schedule.tenant, p.schedule.key]);
    return { schedule: rowToSchedule(held.rows[0]!), created: false };
  }
  await insertJob(c, d, p.job ? [p.job] : [], p.now);
  return { schedule: p.schedule, created: true };
}

export async function listSchedules(
  c: pg.Pool,
  d: SeriesDeps,
  p: SchedulesListParams,
): Promise<Schedule[]> {
  const { rows } = await c.query<ScheduleRow>(d.series.page, [
    p.afterId ?? "",
    p.tenant ?? null,
    p.state ?? null,
    p.limit,
  ]);
  return rows.map(rowToSchedule);
}

async function lockedSchedule(c: pg.ClientBase, d: SeriesDeps, id: string, tenant?: string) {
  const { rows } = await c.query<ScheduleRow>(d.series.byIdLocked, [id]);
  const row = rows[0];
  if (!row || (tenant !== undefined && row.tenant !== tenant)) return null;
  return rowToSchedule(row);
}

export async function replaceSchedule(
  c: pg.ClientBase,
  d: SeriesDeps,
  p: ScheduleReplaceParams,
): Promise<ScheduleChangeResult> {
  const current = await lockedSchedule(c, d, p.id, p.tenant);
  if (!current) return { outcome: "not-found" };
  if (p.expectedVersion !== undefined && current.version !== p.expectedVersion) {
    return { outcome: "version-conflict", schedule: current };
  }
  if (current.nextJobId !== p.expectedNextJobId) return { outcome: "moved", schedule: current };
  if (current.nextJobId !== null) await cancelPending(c, d, current.nextJobId, p.now);
  await insertJob(c, d, p.job ? [p.job] : [], p.now);
  await c.query(d.series.write, scheduleRowValues(scheduleToRow(p.schedule)));
  return { outcome: "changed", schedule: p.schedule };
}

export async function deleteSchedule(
  c: pg.ClientBase,
  d: SeriesDeps,
  p: ScheduleDeleteParams,
): Promise<ScheduleChangeResult> {
  const current = await lockedSchedule(c, d, p.id, p.tenant);
  if (!current) return { outcome: "not-found" };
  if (p.expectedVersion !== undefined && current.version !== p.expectedVersion) {
    return { outcome: "version-conflict", schedule: current };
  }
  if (current.nextJobId !== null) await cancelPending(c, d, current.nextJobId, p.now);
  await c.query(d.series.delete, [current.id]);
  return { outcome: "deleted", schedule: current };
}

/**
 * In the claim's transaction (claim.ts), for the whole batch (store/series-step.ts): the
 * claimed occurrences' series locked and read in one statement (id order, so claimers never
 * deadlock; a concurrent change or claim waits), each advanced (advanceSeries) or, when it
 * cannot be, ended with the reason (stepSeries), the series rows written in one statement and
 * the next occurrences inserted in one. A job its series no longer names advances nothing.
 */
export async function advanceClaimed(
  c: pg.ClientBase,
  d: SeriesDeps,
  jobs: readonly Job[],
  now: number,
  newId: () => string,
): Promise<void> {
  const claimed = claimedOccurrences(jobs);
  if (claimed === null) return;
  const { rows } = await c.query<ScheduleRow>(d.series.byIdsLocked, [claimed.seriesIds]);
  const step = stepClaimedSeries(rows, claimed, now, newId);
  for (const b of step.broken) await c.query(d.series.break, [b.id, b.jobId, b.reason, now]);
  if (step.advanced.length > 0) {
    const values = step.advanced.map(scheduleAdvanceValues);
    await c.query(
      d.series.advance,
      SCHEDULE_ADVANCE_COLUMNS.map((_, i) => values.map((v) => v[i])),
    );
  }
  await insertJob(c, d, step.jobs, now);
}

/**
 * jobCancel's transaction: the cancel, then, when the job was its series' pending
 * occurrence, the series skips to the occurrence after it (skipOccurrence), so it goes on
 * instead of waiting for a job that will never fire. The series row is locked after the
 * job's, in the claim's order. A series that cannot be advanced is ended with the reason;
 * the cancel stands. Resolves to the cancelled job (null: not cancelled) and the next
 * occurrence written.
 */
export async function cancelAndSkip(
  c: pg.ClientBase,
  d: SeriesDeps,
  p: { id: string; tenant?: string; now: number },
  newId: () => string,
): Promise<{ job: Job | null; next: NewJob | null }> {
  const shard = shardOf(p.id, d.shardCount);
  const { rows } = await c.query<JobRow>(d.sql.cancel, [shard, p.id, p.tenant ?? null, p.now]);
  const job = rows[0] ? rowToJob(rows[0]) : null;
  if (job === null || job.scheduleId === null) return { job, next: null };
  const locked = await c.query<ScheduleRow>(d.series.byIdLocked, [job.scheduleId]);
  const row = locked.rows[0];
  if (!row || row.next_job_id !== job.id) return { job, next: null };
  const step = stepSeries(() => rowToSchedule(row), p.now, newId, skipOccurrence);
  if (step.kind === "broken") {
    await c.query(d.series.breakOnCancel, [row.id, step.reason, p.now]);
    return { job, next: null };
  }
  await c.query(d.series.write, scheduleRowValues(scheduleToRow(step.schedule)));
  await insertJob(c, d, step.job ? [step.job] : [], p.now);
  return { job, next: step.job };
}
