import { jobView } from "../api/job-view.js";
import type { Job, JobStatus, JsonValue } from "../core/job.js";
import { isoInZone } from "../core/wall-time.js";
import { REMINDER_TARGET } from "./reminders.js";

/**
 * What the tools show of a job: a task, with snake_case fields, ISO times, and the due time
 * also in the zone the task was created in. Internal fields (lease, fence, shard, bucket)
 * stay out: they mean nothing to an assistant.
 */
export interface TaskView {
  /** The task's id, under the name the seed prototype's clients read. */
  readonly job_id: string;
  readonly id: string;
  readonly description: string | null;
  readonly status: JobStatus;
  /** Whether the task ran to success (status succeeded): the prototype's "completed". */
  readonly completed: boolean;
  /** "reminder" (fires inside duetime) or "webhook" (POSTs to webhook_url). */
  readonly kind: "reminder" | "webhook" | "handler";
  readonly webhook_url: string | null;
  /** Due time, UTC ISO 8601. */
  readonly scheduled_at: string;
  /** Due time in `timezone`, ISO 8601 with that zone's offset; null when no zone is known. */
  readonly scheduled_at_local: string | null;
  readonly timezone: string | null;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly expire_after_ms: number | null;
  readonly fired_at: string | null;
  readonly finished_at: string | null;
  readonly last_result: JsonValue | null;
  readonly last_error: string | null;
  readonly idempotency_key: string | null;
  /** Bumped on every change; pass as task.reschedule's expected_version. */
  readonly version: number;
  readonly created_at: string;
  /** The recurring series this task is an occurrence of, or null for a one-shot task. */
  readonly series_id: string | null;
  /** The task's tags (empty when none). */
  readonly tags: readonly string[];
  /** The pause holding this pending task (it waits until the pause is resumed), or null. */
  readonly paused_by: string | null;
}

/** What task.create stores as the job's payload (and a webhook receives as `payload`). */
export interface TaskPayload {
  readonly description: string;
  readonly timezone?: string;
  readonly data?: JsonValue;
}

/** The task wording of the one JSON view of a job (jobView), plus the due time in its zone. */
export function taskView(job: Job): TaskView {
  const v = jobView(job);
  const p = isObject(job.payload) ? job.payload : {};
  const timezone = typeof p.timezone === "string" && validZone(p.timezone) ? p.timezone : null;
  const webhook = /^https?:\/\//i.test(v.target);
  return {
    job_id: v.id,
    id: v.id,
    description: typeof p.description === "string" ? p.description : null,
    status: v.status,
    completed: v.status === "succeeded",
    kind: v.target === REMINDER_TARGET ? "reminder" : webhook ? "webhook" : "handler",
    webhook_url: webhook ? v.target : null,
    scheduled_at: v.dueAt,
    scheduled_at_local: timezone === null ? null : isoInZone(job.dueAt, timezone),
    timezone,
    attempts: v.attempts,
    max_attempts: v.maxAttempts,
    expire_after_ms: v.expireAfterMs,
    fired_at: v.firedAt,
    finished_at: v.finishedAt,
    last_result: job.lastResult,
    last_error: v.lastError,
    idempotency_key: v.key,
    version: v.version,
    created_at: v.createdAt,
    series_id: v.scheduleId,
    tags: v.tags,
    paused_by: v.pausedBy,
  };
}

/** One line a person (or model) can read at a glance: what state, and what it means. */
export function statusLine(v: TaskView): string {
  const when = v.scheduled_at_local ?? v.scheduled_at;
  const what = v.description === null ? "" : ` "${v.description}"`;
  switch (v.status) {
    case "pending":
      return v.attempts === 0
        ? `pending: task ${v.id}${what} is due ${when}`
        : `pending: task ${v.id}${what} failed attempt ${v.attempts} of ${v.max_attempts} and will retry at ${when} (last error: ${v.last_error ?? "none"})`;
    case "claimed":
      return `claimed: task ${v.id}${what} is firing now (attempt ${v.attempts} of ${v.max_attempts})`;
    case "succeeded":
      return `succeeded: task ${v.id}${what} completed, fired at ${v.fired_at ?? "?"} (due ${when})`;
    case "dead":
      return `dead: task ${v.id}${what} failed ${v.attempts} time(s); last error: ${v.last_error ?? "none"}`;
    case "cancelled":
      return `cancelled: task ${v.id}${what} (was due ${when}) will not fire`;
    case "expired":
      return `expired: task ${v.id}${what} was not fired: it came up more than ${v.expire_after_ms} ms after its due time ${when}`;
  }
}

function isObject(v: JsonValue): v is { [key: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
