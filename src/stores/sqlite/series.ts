import type { Job, NewJob } from "../../core/job.js";
import { skipOccurrence, stepSeries, type Schedule } from "../../core/series.js";
import { rowToSchedule, scheduleToRow, type ScheduleRow } from "../../store/schedule-row.js";
import type {
  ScheduleChangeResult,
  ScheduleDeleteParams,
  ScheduleReplaceParams,
  SchedulesListParams,
} from "../../store/store.js";
import { cancelJob } from "./changes.js";
import type { SqliteContext } from "./context.js";
import { insertJobs } from "./insert.js";

/**
 * Recurring series on SQLite; each function runs inside the caller's write transaction (the
 * store's `ctx.write`), so a series record and its pending occurrence change together.
 */

/** Stores a series with its first occurrence, unless its key is held (then that series). */
export function insertSchedule(
  ctx: SqliteContext,
  schedule: Schedule,
  job: NewJob | null,
  now: number,
): { schedule: Schedule; created: boolean } {
  if (schedule.key !== null) {
    const held = ctx.s.scheduleByKey.get(schedule.tenant, schedule.key) as ScheduleRow | undefined;
    if (held) return { schedule: rowToSchedule(held), created: false };
  }
  ctx.s.scheduleInsert.run(scheduleToRow(schedule));
  if (job) insertJobs(ctx, [job], now);
  return { schedule, created: true };
}

export function getSchedule(ctx: SqliteContext, id: string, tenant?: string): Schedule | null {
  const row = ctx.s.scheduleById.get(id) as ScheduleRow | undefined;
  if (!row || (tenant !== undefined && row.tenant !== tenant)) return null;
  return rowToSchedule(row);
}

export function listSchedules(ctx: SqliteContext, p: SchedulesListParams): Schedule[] {
  const rows = ctx.s.schedulesPage.all({
    after: p.afterId ?? "",
    tenant: p.tenant ?? null,
    state: p.state ?? null,
    limit: p.limit,
  }) as ScheduleRow[];
  return rows.map(rowToSchedule);
}

/** scheduleReplace: the checks, the old occurrence cancelled, the new one and the record written. */
export function replaceSchedule(
  ctx: SqliteContext,
  p: ScheduleReplaceParams,
): ScheduleChangeResult {
  const current = getSchedule(ctx, p.id, p.tenant);
  if (!current) return { outcome: "not-found" };
  if (p.expectedVersion !== undefined && current.version !== p.expectedVersion) {
    return { outcome: "version-conflict", schedule: current };
  }
  if (current.nextJobId !== p.expectedNextJobId) return { outcome: "moved", schedule: current };
  if (current.nextJobId !== null) cancelJob(ctx, { id: current.nextJobId, now: p.now });
  if (p.job) insertJobs(ctx, [p.job], p.now);
  ctx.s.scheduleWrite.run(scheduleToRow(p.schedule));
  return { outcome: "changed", schedule: p.schedule };
}

export function deleteSchedule(ctx: SqliteContext, p: ScheduleDeleteParams): ScheduleChangeResult {
  const current = getSchedule(ctx, p.id, p.tenant);
  if (!current) return { outcome: "not-found" };
  if (p.expectedVersion !== undefined && current.version !== p.expectedVersion) {
    return { outcome: "version-conflict", schedule: current };
  }
  if (current.nextJobId !== null) cancelJob(ctx, { id: current.nextJobId, now: p.now });
  ctx.s.scheduleDelete.run(current.id);
  return { outcome: "deleted", schedule: current };
}

/**
 * In a cancel's transaction, after `job` was cancelled: when it was its series' pending
 * occurrence, the series skips to the occurrence after it (skipOccurrence), so it goes on
 * instead of waiting for a job that will never fire. A series that cannot be advanced is
 * ended with the reason; the cancel stands.
 */
export function skipCancelled(
  ctx: SqliteContext,
  job: Job,
  now: number,
  newId: () => string,
): void {
  if (job.scheduleId === null) return;
  const row = ctx.s.scheduleById.get(job.scheduleId) as ScheduleRow | undefined;
  if (!row || row.next_job_id !== job.id) return;
  const step = stepSeries(() => rowToSchedule(row), now, newId, skipOccurrence);
  if (step.kind === "broken") {
    ctx.s.scheduleBreakOnCancel.run({ id: row.id, reason: step.reason, now });
    return;
  }
  ctx.s.scheduleWrite.run(scheduleToRow(step.schedule));
  if (step.job) insertJobs(ctx, [step.job], now);
}
