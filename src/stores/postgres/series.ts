import type pg from "pg";
import { shardOf } from "../../core/ids.js";
import type { Job, NewJob } from "../../core/job.js";
import { stepSeries, type Schedule } from "../../core/series.js";
import {
  rowToSchedule,
  SCHEDULE_ADVANCE_COLUMNS,
  SCHEDULE_COLUMNS,
  scheduleRowValues,
  scheduleToRow,
  type ScheduleRow,
} from "../../store/schedule-row.js";
import type {
  ScheduleChangeResult,
  ScheduleDeleteParams,
  ScheduleReplaceParams,
  SchedulesListParams,
} from "../../store/store.js";
import { insertArrays, placeJobs } from "./rows.js";
import type { Statements } from "./statements.js";

/** The statements of recurring series for one schema (src/core/series.ts). */
export function seriesStatements(schema: string) {
  const s = `"${schema}"`;
  const cols = SCHEDULE_COLUMNS.join(", ");
  const params = SCHEDULE_COLUMNS.map((_, i) => `$${i + 1}`).join(", ");
  const assign = SCHEDULE_COLUMNS.map((c, i) => `${c} = $${i + 1}`)
    .filter((_, i) => i > 0)
    .join(", ");
  const advance = SCHEDULE_ADVANCE_COLUMNS.map((c, i) => `${c} = $${i + 1}`)
    .filter((_, i) => i > 0)
    .join(", ");
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
    /** A claim's series step (advanceSeries): its columns only, the row locked by the claim. */
    advance: `UPDATE ${s}.schedules SET ${advance} WHERE id = $1`,
    /** A series the claim cannot advance, ended with the reason (core/series.ts stepSeries). */
    break: `UPDATE ${s}.schedules SET state = 'ended', next_job_id = NULL, next_at = NULL,
      next_nominal = NULL, fired_count = fired_count + 1, last_job_id = $2,
      ended_reason = $3, updated_at = $4 WHERE id = $1`,
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
  readonly bucketWidthMs: number;
  readonly shardCount: number;
}

async function insertJob(c: pg.ClientBase, d: SeriesDeps, jobs: NewJob[], now: number) {
  if (jobs.length === 0) return;
  const place = placeJobs(jobs, d.bucketWidthMs, d.shardCount);
  await c.query(d.sql.liveInsert, insertArrays(jobs, place, now));
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
 * In the claim's transaction (claim.ts): each claimed job its series names as the pending
 * occurrence advances the series (advanceSeries) and the next occurrence is inserted; the
 * series rows are locked first, so a concurrent change or claim waits. A job its series no
 * longer names (claimed again after its lease ran out, series deleted) advances nothing. A
 * series that cannot be advanced is ended with the reason (stepSeries); the claim goes on.
 */
export async function advanceClaimed(
  c: pg.ClientBase,
  d: SeriesDeps,
  jobs: readonly Job[],
  now: number,
  newId: () => string,
): Promise<void> {
  const occurrences = new Map<string, string>();
  for (const j of jobs) if (j.scheduleId !== null) occurrences.set(j.scheduleId, j.id);
  if (occurrences.size === 0) return;
  const { rows } = await c.query<ScheduleRow>(d.series.byIdsLocked, [[...occurrences.keys()]]);
  const next: NewJob[] = [];
  for (const row of rows) {
    if (row.next_job_id === null || occurrences.get(row.id) !== row.next_job_id) continue;
    const step = stepSeries(() => rowToSchedule(row), now, newId);
    if (step.kind === "broken") {
      await c.query(d.series.break, [row.id, row.next_job_id, step.reason, now]);
      continue;
    }
    const values = scheduleToRow(step.schedule);
    await c.query(
      d.series.advance,
      SCHEDULE_ADVANCE_COLUMNS.map((col) => values[col]),
    );
    if (step.job) next.push(step.job);
  }
  await insertJob(c, d, next, now);
}
