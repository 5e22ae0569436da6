import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type * as z from "zod";
import { formatDuration } from "../core/duration-text.js";
import { InvalidJobError } from "../core/errors.js";
import type { JsonValue } from "../core/job.js";
import { toolError } from "./errors.js";
import { ok } from "./results.js";
import type {
  createTaskInput,
  listTasksInput,
  rescheduleTaskInput,
  taskIdInput,
} from "./schemas.js";
import {
  cancelSeries,
  createSeries,
  listSeries,
  rescheduleSeries,
  seriesOfOccurrence,
  seriesStatus,
} from "./series-tools.js";
import { seriesLine, seriesView } from "./series-view.js";
import { statusLine, taskView, type TaskPayload } from "./task-view.js";
import { outcomeCallbacks, webhookTarget, type ToolContext } from "./tool-context.js";

/**
 * The bodies of the task tools. A recurring series' id is accepted wherever a task id is:
 * a task is looked up first, then a series (series-tools.ts).
 */

export async function createTask(
  ctx: ToolContext,
  args: z.infer<typeof createTaskInput>,
): Promise<CallToolResult> {
  const target = webhookTarget(ctx, args.webhook_url, args.webhook_headers);
  const callbacks = outcomeCallbacks(ctx, args.callbacks);
  const payload: TaskPayload = {
    description: args.description,
    ...(args.timezone === undefined ? {} : { timezone: args.timezone }),
    ...(args.payload === undefined ? {} : { data: args.payload as JsonValue }),
  };
  if (args.recurrence !== undefined) {
    if (args.tags !== undefined) {
      throw new InvalidJobError(
        "tags",
        "no tags with recurrence (a series carries none)",
        args.tags,
      );
    }
    if (args.callbacks !== undefined) {
      throw new InvalidJobError(
        "callbacks",
        "no callbacks with recurrence (a series' occurrences carry none)",
        args.callbacks,
      );
    }
    const template = { ...target, payload: payload as unknown as JsonValue };
    return createSeries(ctx, { ...args, recurrence: args.recurrence }, template);
  }
  const { job, created, outcome } = await ctx.scheduler.schedule(
    {
      ...dueTime(args),
      tenant: ctx.tenant,
      target: target.target,
      targetOptions: target.options,
      payload: payload as unknown as JsonValue,
      ...(args.tags === undefined ? {} : { tags: args.tags }),
      ...(callbacks === undefined ? {} : { callbacks }),
      ...(args.idempotency_key === undefined ? {} : { key: args.idempotency_key }),
      ...(args.key_mode === undefined ? {} : { keyMode: args.key_mode }),
      ...(args.max_wait_ms === undefined ? {} : { maxWaitMs: args.max_wait_ms }),
      ...(args.max_attempts === undefined ? {} : { maxAttempts: args.max_attempts }),
      ...(args.expire_after_ms === undefined ? {} : { expireAfterMs: args.expire_after_ms }),
    },
    { maxPastMs: ctx.maxPastMs },
  );
  const task = taskView(job);
  if (outcome === "too-late") {
    return toolError(
      `too-late: not replaced; task ${job.id} holding idempotency_key ${JSON.stringify(job.key)} is firing now. ${statusLine(task)}`,
      { outcome, job_id: job.id, task },
    );
  }
  const overdueMs = created || outcome === "replaced" ? ctx.scheduler.now() - job.dueAt : 0;
  const overdue =
    overdueMs > 0 ? `; it was due ${formatDuration(overdueMs)} ago (overdue): it runs now` : "";
  const summaries = {
    created: `created: ${statusLine(task)}${overdue}`,
    replaced: `replaced: live task ${job.id} holding idempotency_key ${JSON.stringify(job.key)} now reads: ${statusLine(task)}${overdue}`,
    existing: `existing: idempotency_key ${JSON.stringify(job.key)} is held by live task ${job.id}; nothing new was created. ${statusLine(task)}`,
  };
  return ok(summaries[outcome], {
    outcome,
    job_id: job.id,
    ...(overdueMs > 0 ? { overdue_ms: overdueMs } : {}),
    task,
  });
}

export async function listTasks(
  ctx: ToolContext,
  args: z.infer<typeof listTasksInput>,
): Promise<CallToolResult> {
  const page = await ctx.scheduler.list({
    tenant: ctx.tenant,
    limit: args.limit ?? 20,
    ...(args.status === undefined ? {} : { status: args.status }),
    ...(args.due_from === undefined ? {} : { dueFrom: args.due_from }),
    ...(args.due_to === undefined ? {} : { dueTo: args.due_to }),
    ...(args.timezone === undefined ? {} : { timeZone: args.timezone }),
    ...(args.cursor === undefined ? {} : { cursor: args.cursor }),
    ...(args.tag === undefined ? {} : { tag: args.tag }),
  });
  const tasks = page.jobs.map(taskView);
  // the series come with the first page of tasks, or as asked by series_cursor; a series
  // carries no tags, so a listing by tag has none
  const withSeries =
    args.tag === undefined && (args.cursor === undefined || args.series_cursor !== undefined);
  const series = withSeries
    ? await listSeries(ctx, args)
    : { series: [], series_next_cursor: null };
  const more = page.nextCursor === null ? "" : "; more tasks match: pass next_cursor as cursor";
  const moreSeries =
    series.series_next_cursor === null
      ? ""
      : "; more series: pass series_next_cursor as series_cursor";
  return ok(
    args.tag === undefined
      ? `${tasks.length} task(s) in due order${more}; ${series.series.length} recurring series${moreSeries}`
      : `${tasks.length} task(s) tagged ${JSON.stringify(args.tag)}, in creation order${more}`,
    { tasks, next_cursor: page.nextCursor, ...series },
  );
}

export async function taskStatus(
  ctx: ToolContext,
  args: z.infer<typeof taskIdInput>,
): Promise<CallToolResult> {
  const ref = taskRefOf(args);
  if (ref === null) return noIdGiven();
  const job =
    "key" in ref
      ? await ctx.scheduler.getByKey(ref.key, { tenant: ctx.tenant })
      : await ctx.scheduler.get(ref.id, { tenant: ctx.tenant });
  if (job === null) return ("id" in ref && (await seriesStatus(ctx, ref.id))) || notFound(ref);
  const task = taskView(job);
  return ok(statusLine(task), { task });
}

export async function cancelTask(
  ctx: ToolContext,
  args: z.infer<typeof taskIdInput>,
): Promise<CallToolResult> {
  const ref = taskRefOf(args);
  if (ref === null) return noIdGiven();
  const tenant = { tenant: ctx.tenant };
  const r =
    "key" in ref
      ? await ctx.scheduler.cancelByKey(ref.key, tenant)
      : await ctx.scheduler.cancel(ref.id, tenant);
  switch (r.outcome) {
    case "not-found":
      return ("id" in ref && (await cancelSeries(ctx, ref.id))) || notFound(ref);
    case "cancelled": {
      const task = taskView(r.job);
      const s = await seriesOfOccurrence(ctx, r.job);
      if (s === null) return ok(`cancelled: ${statusLine(task)}`, { outcome: "cancelled", task });
      const series = seriesView(s);
      return ok(
        `cancelled: this occurrence of series ${s.id} only; ${statusLine(task)}. ` +
          `The series goes on (task.cancel with its id ends it): ${seriesLine(series)}`,
        { outcome: "cancelled", task, series },
      );
    }
    case "too-late": {
      // Definite, not an error of the call: but the task was not cancelled, so the model
      // must not report it as done.
      const task = taskView(r.job);
      return toolError(`too-late: not cancelled. ${statusLine(task)}`, {
        outcome: "too-late",
        task,
      });
    }
  }
}

export async function rescheduleTask(
  ctx: ToolContext,
  args: z.infer<typeof rescheduleTaskInput>,
): Promise<CallToolResult> {
  const ref = taskRefOf(args);
  if (ref === null) return noIdGiven();
  if ("id" in ref && (await ctx.scheduler.get(ref.id, { tenant: ctx.tenant })) === null) {
    return (await rescheduleSeries(ctx, ref.id, args)) ?? notFound(ref);
  }
  if (args.recurrence !== undefined) {
    throw new InvalidJobError(
      "recurrence",
      "a series' id in job_id (a task's time is changed by scheduled_at)",
      args.recurrence,
    );
  }
  const opts = {
    tenant: ctx.tenant,
    maxPastMs: ctx.maxPastMs,
    ...(args.expected_version === undefined ? {} : { expectedVersion: args.expected_version }),
  };
  const r =
    "key" in ref
      ? await ctx.scheduler.rescheduleByKey(ref.key, dueTime(args), opts)
      : await ctx.scheduler.reschedule(ref.id, dueTime(args), opts);
  if (r.outcome === "not-found") return notFound(ref);
  const task = taskView(r.job);
  switch (r.outcome) {
    case "rescheduled":
      return ok(`rescheduled: ${statusLine(task)}`, { outcome: "rescheduled", task });
    case "too-late":
      return toolError(`too-late: not rescheduled. ${statusLine(task)}`, {
        outcome: "too-late",
        task,
      });
    case "version-conflict":
      return toolError(
        `version-conflict: not rescheduled; task ${task.id} is at version ${task.version}, ` +
          `expected ${args.expected_version}. Read it again with task.status.`,
        { outcome: "version-conflict", task },
      );
    case "key-conflict":
      return toolError(`key-conflict: not rescheduled. ${statusLine(task)}`, {
        outcome: "key-conflict",
        task,
      });
  }
}

/**
 * scheduled_at and timezone as the library's fields: the scheduler reads them on its clock
 * ("in 10 minutes" is ten minutes from this call) and applies the server's past-time
 * tolerance (`maxPastMs`, passed with each call), so the tools and the HTTP API share one
 * check. withInputErrors relabels the library's field names as scheduled_at, timezone.
 */
function dueTime(args: {
  scheduled_at?: string | undefined;
  timezone?: string | undefined;
  locale?: string | undefined;
}): { dueAt: string; timeZone?: string; locale?: string } {
  if (args.scheduled_at === undefined) {
    throw new InvalidJobError(
      "scheduled_at",
      'a due time such as "2026-12-01T09:00:00", "in 10 minutes" or "tomorrow 9am" (or recurrence, for a series)',
      undefined,
    );
  }
  return {
    dueAt: args.scheduled_at,
    ...(args.timezone === undefined ? {} : { timeZone: args.timezone }),
    ...(args.locale === undefined ? {} : { locale: args.locale }),
  };
}

/**
 * The task a call names: `job_id` or `id` (both may be given if they agree), or
 * `idempotency_key` (alone); null for none.
 */
function taskRefOf(args: {
  job_id?: string | undefined;
  id?: string | undefined;
  idempotency_key?: string | undefined;
}): { id: string } | { key: string } | null {
  if (args.job_id !== undefined && args.id !== undefined && args.job_id !== args.id) {
    throw new InvalidJobError(
      "job_id",
      `the same task as id (${args.id}), or only one of them`,
      args.job_id,
    );
  }
  const id = args.job_id ?? args.id;
  if (args.idempotency_key !== undefined) {
    if (id !== undefined) {
      throw new InvalidJobError(
        "idempotency_key",
        "to be given instead of job_id (or id), not beside it",
        args.idempotency_key,
      );
    }
    return { key: args.idempotency_key };
  }
  return id === undefined ? null : { id };
}

function notFound(ref: { id: string } | { key: string }): CallToolResult {
  if ("key" in ref) {
    return toolError(
      `not-found: no live task holds idempotency_key ${JSON.stringify(ref.key)} (task not found)`,
      { outcome: "not-found", job_id: null, idempotency_key: ref.key },
    );
  }
  return toolError(`not-found: no task ${ref.id} (task not found)`, {
    outcome: "not-found",
    job_id: ref.id,
    id: ref.id,
  });
}

/** A call naming no task finds none: a definite answer the model can act on. */
function noIdGiven(): CallToolResult {
  return toolError(
    "not-found: no job_id (or id) given, so no task was found; pass job_id (or idempotency_key)",
    {
      outcome: "not-found",
      job_id: null,
      id: null,
    },
  );
}
