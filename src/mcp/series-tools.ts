import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type * as z from "zod";
import type { RecurringInput, ScheduleInfo } from "../api/series.js";
import { InvalidJobError, ScheduleNotFoundError, VersionConflictError } from "../core/errors.js";
import type { Job, JsonValue } from "../core/job.js";
import { RECURRENCE_FORMS, readRecurrence } from "../core/recurrence/index.js";
import { toolError } from "./errors.js";
import { ok } from "./results.js";
import type { createTaskInput, listTasksInput, rescheduleTaskInput } from "./schemas.js";
import { seriesLine, seriesView } from "./series-view.js";
import type { ToolContext } from "./tool-context.js";

/**
 * The task tools on recurring series (task.create with `recurrence`): a series' id is
 * accepted wherever a task's is. Each is one call of the Scheduler's series API; the rule
 * is read by the one reader of rules (core/recurrence), and a rule that cannot be read is
 * refused naming `recurrence` with examples that work.
 */

/** Arguments of task.create that mean something for a one-shot task only. */
const ONE_SHOT_ONLY = ["key_mode", "max_wait_ms", "locale"] as const;

export async function createSeries(
  ctx: ToolContext,
  args: z.infer<typeof createTaskInput> & { recurrence: string },
  template: { target: string; options: Record<string, unknown> | null; payload: JsonValue },
): Promise<CallToolResult> {
  for (const field of ONE_SHOT_ONLY) {
    if (args[field] !== undefined) {
      throw new InvalidJobError(field, "to be given only without recurrence", args[field]);
    }
  }
  const input: RecurringInput = {
    ...ruleOf(ctx, args.recurrence, args.timezone),
    ...(args.timezone === undefined ? {} : { timeZone: args.timezone }),
    ...(args.scheduled_at === undefined ? {} : { start: args.scheduled_at }),
    tenant: ctx.tenant,
    target: template.target,
    targetOptions: template.options,
    payload: template.payload,
    ...(args.idempotency_key === undefined ? {} : { key: args.idempotency_key }),
    ...(args.max_attempts === undefined ? {} : { maxAttempts: args.max_attempts }),
    ...(args.expire_after_ms === undefined ? {} : { expireAfterMs: args.expire_after_ms }),
  };
  const { schedule, created } = await ruleErrors(() => ctx.scheduler.scheduleRecurring(input));
  const series = seriesView(schedule);
  const line = created
    ? `created: ${seriesLine(series)}`
    : `existing: idempotency_key ${JSON.stringify(schedule.key)} is held by series ${schedule.id}; nothing new was created. ${seriesLine(series)}`;
  return ok(line, {
    outcome: created ? "created" : "existing",
    job_id: series.id,
    series_id: series.id,
    series,
  });
}

/** task.status of a series; null when `id` names none (of this tenant). */
export async function seriesStatus(ctx: ToolContext, id: string): Promise<CallToolResult | null> {
  const s = await ctx.scheduler.getSchedule(id, { tenant: ctx.tenant });
  if (s === null) return null;
  const series = seriesView(s);
  return ok(seriesLine(series), { series });
}

/** task.cancel of a series ends it: deleted, its pending occurrence cancelled. */
export async function cancelSeries(ctx: ToolContext, id: string): Promise<CallToolResult | null> {
  let s: ScheduleInfo;
  try {
    s = await ctx.scheduler.deleteSchedule(id, { tenant: ctx.tenant });
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  }
  const series = { ...seriesView(s), state: "ended" as const, next_occurrences: [] };
  const pending =
    s.nextJobId === null ? "" : `; its pending occurrence (task ${s.nextJobId}) is cancelled`;
  return ok(`cancelled: series ${s.id} is ended and deleted, nothing more fires${pending}`, {
    outcome: "cancelled",
    series,
  });
}

/**
 * The series a cancelled occurrence belongs to, as it is now: the store's cancel skipped
 * the occurrence in the same transaction (store.ts jobCancel), so the series already goes
 * on from the one after it. Null: not a series' occurrence (or the series is gone).
 */
export async function seriesOfOccurrence(ctx: ToolContext, job: Job): Promise<ScheduleInfo | null> {
  if (job.scheduleId === null) return null;
  return ctx.scheduler.getSchedule(job.scheduleId, { tenant: ctx.tenant });
}

/**
 * task.reschedule of a series: `recurrence` changes its rule (and `timezone` its zone);
 * `scheduled_at` restarts it from that time (its next occurrence is the rule's first at or
 * after it). The pending occurrence is replaced in the same write. Null: no such series.
 */
export async function rescheduleSeries(
  ctx: ToolContext,
  id: string,
  args: z.infer<typeof rescheduleTaskInput>,
): Promise<CallToolResult | null> {
  const s = await ctx.scheduler.getSchedule(id, { tenant: ctx.tenant });
  if (s === null) return null;
  if (args.locale !== undefined) {
    throw new InvalidJobError("locale", "to be given only for a task, not a series", args.locale);
  }
  if (args.scheduled_at === undefined && args.recurrence === undefined) {
    throw new InvalidJobError(
      "scheduled_at",
      "a time the series restarts from, or recurrence (a new rule), for a series",
      undefined,
    );
  }
  if (s.state === "ended") {
    return toolError(`too-late: not rescheduled; ${seriesLine(seriesView(s))}`, {
      outcome: "too-late",
      series: seriesView(s),
    });
  }
  const changes: Partial<RecurringInput> = {
    ...(args.recurrence === undefined
      ? {}
      : ruleOf(ctx, args.recurrence, args.timezone ?? s.timeZone)),
    ...(args.timezone === undefined ? {} : { timeZone: args.timezone }),
    ...(args.scheduled_at === undefined ? {} : { start: args.scheduled_at }),
  };
  const opts = {
    tenant: ctx.tenant,
    ...(args.expected_version === undefined ? {} : { expectedVersion: args.expected_version }),
  };
  try {
    const changed = await ruleErrors(() => ctx.scheduler.updateSchedule(id, changes, opts));
    const series = seriesView(changed);
    return ok(`rescheduled: ${seriesLine(series)}`, { outcome: "rescheduled", series });
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    if (!(err instanceof VersionConflictError)) throw err;
    const now = await ctx.scheduler.getSchedule(id, { tenant: ctx.tenant });
    if (now === null) return null;
    return toolError(
      `version-conflict: not rescheduled; series ${id} is at version ${now.version}, ` +
        `expected ${args.expected_version}. Read it again with task.status.`,
      { outcome: "version-conflict", series: seriesView(now) },
    );
  }
}

/** The series part of task.list: a page of the tenant's series, in creation order. */
export async function listSeries(
  ctx: ToolContext,
  args: z.infer<typeof listTasksInput>,
): Promise<{ series: ReturnType<typeof seriesView>[]; series_next_cursor: string | null }> {
  const page = await ctx.scheduler.listSchedules({
    tenant: ctx.tenant,
    limit: args.limit ?? 20,
    ...(args.series_cursor === undefined ? {} : { cursor: args.series_cursor }),
  });
  return { series: page.schedules.map(seriesView), series_next_cursor: page.nextCursor };
}

/** `recurrence` read into a cron or RRULE rule, English in the series' zone. */
function ruleOf(
  ctx: ToolContext,
  recurrence: string,
  timezone: string | undefined,
): { cron: string } | { rrule: string } {
  const zone = timezone ?? ctx.scheduler.options.timeZone;
  return readRecurrence(recurrence, { timeZone: zone, field: "recurrence" });
}

/**
 * The library names a rule that does not compile (or never fires) `cron` or `rrule`; the
 * tool's field is `recurrence`, and the refusal shows forms that would work.
 */
async function ruleErrors<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof InvalidJobError && (err.field === "cron" || err.field === "rrule")) {
      throw new InvalidJobError(
        "recurrence",
        `${err.expected}; rules that work: ${RECURRENCE_FORMS}`,
        err.received,
      );
    }
    throw err;
  }
}
