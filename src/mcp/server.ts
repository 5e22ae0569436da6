import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Scheduler } from "../api/scheduler.js";
import { InvalidJobError, InvalidOptionError } from "../core/errors.js";
import { validateTenant } from "../core/schedule-input.js";
import { withInputErrors } from "./errors.js";
import { createTaskInput, listTasksInput, rescheduleTaskInput, taskIdInput } from "./schemas.js";
import { cancelTask, createTask, listTasks, rescheduleTask, taskStatus } from "./tools.js";
import type { ToolContext } from "./tool-context.js";

/** Options of an MCP server over one scheduler, for one tenant. */
export interface CreateMcpServerOptions {
  /** The scheduler whose jobs the tools manage. Required. */
  readonly scheduler: Scheduler;
  /**
   * Tenant every tool call is scoped to: tasks are created for it, and another tenant's
   * task reads as not found. Required.
   */
  readonly tenant: string;
  /**
   * Whether task.create accepts `webhook_url`. Default true. False where nothing can
   * deliver webhooks (`duetime mcp` firing its own database registers only the reminder
   * handler, so a webhook task would go dead there).
   */
  readonly webhooks?: boolean;
  /**
   * How far in the past `scheduled_at` may be, in ms; null accepts any. A past task fires at
   * once and task.create says how overdue it was. Default null: the seed prototype's clients
   * create a past task on purpose (docs/mcp.md). The HTTP API keeps its own tolerance.
   */
  readonly maxPastMs?: number | null;
  /**
   * Tool names as `task.create` (".", default) or `task_create` ("_") for clients that
   * allow only letters, digits, "_" and "-" in tool names.
   */
  readonly toolNameSeparator?: "." | "_";
  /**
   * Accept `webhook_url` hosts written as private, loopback or link-local addresses (and
   * localhost), as `duetime serve --allow-private-targets` does. Targets are otherwise held
   * to the same policy as POST /v1/jobs (core/webhook-target.ts). Default false.
   */
  readonly allowPrivateTargets?: boolean;
  /** Version reported to clients in the initialize handshake. Default "0.0.0". */
  readonly version?: string;
}

const INSTRUCTIONS = `duetime schedules tasks: reminders (no webhook) and webhooks (an HTTP POST at the due time), one-shot or recurring.
Times: ISO 8601 (with an offset, or without one: a wall time in the given IANA timezone), "in 10 minutes", or natural language such as "tomorrow 9am" read in that timezone (default: the server's, UTC unless set); pass the user's timezone, and locale for other languages ("fr", "de", "zh-Hant"). A past time runs at once.
task.create answers with the task's job_id; task.status, task.cancel and task.reschedule take job_id (or id); task.status shows its state (pending, claimed, succeeded, dead, cancelled, expired), fired time and last result or error.
task.cancel and task.reschedule give a definite outcome: done, too-late (already firing or finished) or not-found.
Recurring: task.create with recurrence ("every weekday at 9am", "every 2 weeks on monday at 17:30", a cron expression or an RRULE) in timezone creates a series; its id works in task.status, task.cancel (ends the series) and task.reschedule (scheduled_at restarts it from that time, recurrence changes its rule); task.list shows series with their rule in words and next occurrences. Each occurrence is a task of its own.`;

/**
 * An MCP server (official SDK) with the task tools over `scheduler`, scoped to `tenant`.
 * Bad arguments come back as tool errors naming the field, never as protocol errors; the
 * caller connects it to a transport (stdio, streamable HTTP).
 */
export function createMcpServer(options: CreateMcpServerOptions): McpServer {
  const o = resolveOptions(options);
  const ctx: ToolContext = {
    scheduler: o.scheduler,
    tenant: o.tenant,
    webhooks: o.webhooks,
    maxPastMs: o.maxPastMs,
    allowPrivateTargets: o.allowPrivateTargets,
  };
  const name = (verb: string): string => `task${o.toolNameSeparator}${verb}`;
  const server = new McpServer(
    { name: "duetime", version: o.version },
    { capabilities: { logging: {} }, instructions: INSTRUCTIONS },
  );

  server.registerTool(
    name("create"),
    {
      title: "Create a task",
      description:
        "Schedule a task: a reminder, or a webhook POSTed to webhook_url when due. " +
        "Returns the task with its id and due time (UTC and in its timezone). With " +
        "recurrence it creates a recurring series instead and returns it with its next occurrences.",
      inputSchema: createTaskInput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    (args) => withInputErrors(() => createTask(ctx, args)),
  );
  server.registerTool(
    name("list"),
    {
      title: "List tasks",
      description:
        "List tasks in due order, filtered by status and due range, a page at a time " +
        "(pass next_cursor back as cursor), and the recurring series with their rule in " +
        "words, zone and next occurrences (series_cursor for more).",
      inputSchema: listTasksInput,
      annotations: { readOnlyHint: true },
    },
    (args) => withInputErrors(() => listTasks(ctx, args)),
  );
  server.registerTool(
    name("status"),
    {
      title: "Task status",
      description:
        "One task: its state, due time (UTC and in its timezone), attempts, fired time, and " +
        "last result or error. For a series' id: its rule, state, next occurrences and last outcome.",
      inputSchema: taskIdInput,
      annotations: { readOnlyHint: true },
    },
    (args) => withInputErrors(() => taskStatus(ctx, args)),
  );
  server.registerTool(
    name("cancel"),
    {
      title: "Cancel a task",
      description:
        "Cancel a pending task. Outcome: cancelled; too-late (already firing or finished: " +
        "not cancelled); not-found. A series' id ends the series (nothing more fires); an " +
        "occurrence's task id skips that occurrence only.",
      inputSchema: taskIdInput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    },
    (args) => withInputErrors(() => cancelTask(ctx, args)),
  );
  server.registerTool(
    name("reschedule"),
    {
      title: "Reschedule (snooze) a task",
      description:
        "Move a pending task to a new due time. Outcome: rescheduled; too-late; " +
        "version-conflict (with expected_version, when the task changed); not-found. For a " +
        "series' id: scheduled_at restarts it from that time, recurrence changes its rule.",
      inputSchema: rescheduleTaskInput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    (args) => withInputErrors(() => rescheduleTask(ctx, args)),
  );
  return server;
}

interface ResolvedMcpOptions {
  readonly scheduler: Scheduler;
  readonly tenant: string;
  readonly webhooks: boolean;
  readonly maxPastMs: number | null;
  readonly toolNameSeparator: "." | "_";
  readonly version: string;
  readonly allowPrivateTargets: boolean;
}

function resolveOptions(o: CreateMcpServerOptions): ResolvedMcpOptions {
  if (typeof o?.scheduler?.schedule !== "function") {
    throw new InvalidOptionError("scheduler", "a Scheduler", o?.scheduler);
  }
  try {
    validateTenant(o.tenant);
  } catch (err) {
    if (err instanceof InvalidJobError) {
      throw new InvalidOptionError("tenant", err.expected, o.tenant);
    }
    throw err;
  }
  const maxPastMs = o.maxPastMs ?? null;
  if (maxPastMs !== null && (!Number.isInteger(maxPastMs) || maxPastMs < 0)) {
    throw new InvalidOptionError("maxPastMs", "an integer >= 0, or null for any", o.maxPastMs);
  }
  if (o.allowPrivateTargets !== undefined && typeof o.allowPrivateTargets !== "boolean") {
    throw new InvalidOptionError("allowPrivateTargets", "a boolean", o.allowPrivateTargets);
  }
  const sep = o.toolNameSeparator ?? ".";
  if (sep !== "." && sep !== "_") {
    throw new InvalidOptionError("toolNameSeparator", '"." or "_"', o.toolNameSeparator);
  }
  return Object.freeze({
    scheduler: o.scheduler,
    tenant: o.tenant,
    webhooks: o.webhooks ?? true,
    maxPastMs,
    toolNameSeparator: sep,
    version: o.version ?? "0.0.0",
    allowPrivateTargets: o.allowPrivateTargets ?? false,
  });
}
