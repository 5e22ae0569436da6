import * as z from "zod";
import { JOB_STATUSES, KEY_MODES, type JobStatus, type KeyMode } from "../core/job.js";
import { fieldLabel } from "../core/errors.js";
import { MAX_LOCALE } from "../core/locales.js";
import { MAX_TAG_LENGTH, MAX_TAGS } from "../core/tags.js";
import { MAX_RULE_TEXT } from "../core/recurrence/index.js";
import { MAX_TIME_TEXT, MAX_TIME_ZONE } from "../core/time-input.js";
import { invalidText } from "./errors.js";

/**
 * Input schemas of the MCP tools. They give clients typed, described arguments (the SDK
 * publishes them as JSON Schema in tools/list) and check shapes and types; every message
 * reads `field: expected X, received Y` like the library's own validator, which then checks
 * meaning (times, zones, sizes, URLs) inside the tools.
 */

type Issue = { readonly input?: unknown; readonly code?: string; readonly keys?: string[] };

/** A zod error function producing the duetime wording for `field`. */
function expecting(field: string, expected: string) {
  return (issue: Issue): string => invalidText(field, expected, issue.input);
}

function text(field: string, max: number) {
  const expected = `a string of 1 to ${max} characters`;
  return z
    .string({ error: expecting(field, expected) })
    .min(1, { error: expecting(field, expected) })
    .max(max, { error: expecting(field, expected) });
}

function integer(field: string, min: number, max: number) {
  const e = expecting(field, `an integer from ${min} to ${max}`);
  return z.int({ error: e }).min(min, { error: e }).max(max, { error: e });
}

/** Unknown arguments are refused rather than ignored: a misspelt field must not vanish. */
function strict<T extends z.ZodRawShape>(shape: T) {
  const known = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue: Issue) =>
      issue.code === "unrecognized_keys"
        ? `${(issue.keys ?? []).map(fieldLabel).join(", ")}: expected no such field (known fields: ${known}), received a value`
        : invalidText("arguments", "an object", issue.input),
  });
}

const WHEN =
  'ISO 8601 time ("2026-12-01T09:00:00+01:00"; without an offset, "2026-12-01T09:00:00", a ' +
  'wall time in `timezone`), a delay ("in 10 minutes", "in 2h 30m") or natural language ' +
  '("tomorrow 9am", "next friday at 17:30") read in `timezone`. A past time runs at once';
const TIMEZONE =
  "IANA time zone (e.g. Europe/Paris) in which wall times and natural language are read and " +
  "the due time is shown. Default: the server's zone (UTC unless set).";
const LOCALE =
  'Language of a natural-language scheduled_at ("fr": "demain à 9h", "zh-Hant": "明天早上9點"). ' +
  "Default English.";
const RECURRENCE =
  'English ("every weekday at 9am", "every 2 weeks on monday at 17:30", "the last day of ' +
  'each month at 18:00", "every 15 minutes"), a cron expression ("0 9 * * 1-5") or an RRULE ' +
  '("FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=0")';
const MAX_DELAY_MS = 100 * 365 * 86_400_000;

const statusEnum = z.enum(JOB_STATUSES as [JobStatus, ...JobStatus[]]);

export const createTaskInput = strict({
  description: text("description", 1000).describe(
    "What the task is about (the reminder text). Shown by task.status and sent in the webhook payload.",
  ),
  scheduled_at: text("scheduled_at", MAX_TIME_TEXT)
    .optional()
    .describe(
      `When it is due: ${WHEN}. Required for a one-shot task; with recurrence, optional: ` +
        "the series starts then (its first occurrence is the rule's first at or after it).",
    ),
  recurrence: text("recurrence", MAX_RULE_TEXT)
    .optional()
    .describe(
      `Makes it a recurring series instead of a one-shot task: ${RECURRENCE}. Wall times are ` +
        "`timezone`'s, and stay so across DST changes.",
    ),
  timezone: text("timezone", MAX_TIME_ZONE).optional().describe(TIMEZONE),
  locale: text("locale", MAX_LOCALE).optional().describe(LOCALE),
  webhook_url: text("webhook_url", 2048)
    .optional()
    .describe(
      "http(s) URL to POST to when due. Without it the task is a reminder: it fires in the " +
        "server and task.status then shows it succeeded with its fired time.",
    ),
  webhook_headers: z
    .record(z.string(), z.string(), {
      error: expecting("webhook_headers", "an object of header names to string values"),
    })
    .optional()
    .describe("Extra HTTP headers for the webhook request (only with webhook_url)."),
  payload: z
    .unknown()
    .optional()
    .describe("Any JSON value, delivered as `data` in the task's payload."),
  idempotency_key: text("idempotency_key", 256)
    .optional()
    .describe(
      "Creating again with the same key returns the live task holding it instead of a second " +
        "task (or replaces it: key_mode). task.status, task.cancel and task.reschedule accept " +
        "it in place of job_id.",
    ),
  key_mode: z
    .enum(KEY_MODES as [KeyMode, ...KeyMode[]], {
      error: expecting("key_mode", `one of ${KEY_MODES.join(", ")}`),
    })
    .optional()
    .describe(
      "With idempotency_key, while a live task holds it: keep (default) returns that task " +
        "unchanged; replace gives it this call's time, description and options (outcome " +
        "replaced; too-late if it is firing: nothing changes); debounce replaces it but never " +
        "later than max_wait_ms after the first call.",
    ),
  max_wait_ms: integer("max_wait_ms", 0, MAX_DELAY_MS)
    .optional()
    .describe("With key_mode debounce: the task fires at most this long after the first call."),
  tags: z
    .array(z.string({ error: expecting("tags[]", "a tag (a string)") }), {
      error: expecting("tags", `an array of at most ${MAX_TAGS} tags`),
    })
    .optional()
    .describe(
      `Labels to find and act on the task by (task.list tag), such as "user:42" or ` +
        `"campaign:spring": at most ${MAX_TAGS}, each 1 to ${MAX_TAG_LENGTH} printable ` +
        "characters without spaces, none repeated. One-shot tasks only.",
    ),
  callbacks: z
    .strictObject(
      {
        onSuccess: text("callbacks.onSuccess", 2048).optional(),
        onFailure: text("callbacks.onFailure", 2048).optional(),
        onDead: text("callbacks.onDead", 2048).optional(),
      },
      {
        error: (issue: Issue) =>
          issue.code === "unrecognized_keys"
            ? `${(issue.keys ?? []).map((k) => `callbacks.${k}`).join(", ")}: expected no such field (known fields: onSuccess, onFailure, onDead), received a value`
            : invalidText(
                "callbacks",
                "an object of onSuccess, onFailure and onDead URLs",
                issue.input,
              ),
      },
    )
    .optional()
    .describe(
      "http(s) URLs POSTed (signed, retried like webhooks) when an attempt settles: onSuccess " +
        "(it succeeded), onFailure (it failed and will be retried), onDead (no attempts left). " +
        "Held to the webhook_url address rules. One-shot tasks only.",
    ),
  max_attempts: integer("max_attempts", 1, 1000)
    .optional()
    .describe("Attempts before the task is dead (webhook failures are retried). Default 3."),
  expire_after_ms: integer("expire_after_ms", 0, MAX_DELAY_MS)
    .optional()
    .describe(
      "Misfire tolerance in ms: if the task would fire later than this after its due time " +
        "(server down), it is marked expired instead. Default: fire however late.",
    ),
});

export const listTasksInput = strict({
  status: z
    .union([statusEnum, z.array(statusEnum)], {
      error: expecting("status", `one of ${JOB_STATUSES.join(", ")} (or an array of them)`),
    })
    .optional()
    .describe(`Only tasks in this state or these states: ${JOB_STATUSES.join(", ")}.`),
  due_from: text("due_from", MAX_TIME_TEXT)
    .optional()
    .describe(`Only tasks due at or after this time: ${WHEN}.`),
  due_to: text("due_to", MAX_TIME_TEXT)
    .optional()
    .describe(`Only tasks due before this time: ${WHEN}.`),
  tag: text("tag", MAX_TAG_LENGTH)
    .optional()
    .describe(
      "Only tasks carrying this tag (task.create tags), in creation order instead of due " +
        "order; recurring series are not listed then.",
    ),
  timezone: text("timezone", MAX_TIME_ZONE).optional().describe(TIMEZONE),
  cursor: text("cursor", 512)
    .optional()
    .describe("next_cursor of the previous page, to read the next one."),
  limit: integer("limit", 1, 100)
    .optional()
    .describe("Tasks (and series) per page, 1 to 100. Default 20."),
  series_cursor: text("series_cursor", 64)
    .optional()
    .describe(
      "series_next_cursor of the previous answer, to read the next page of recurring series " +
        "(the first page comes with the first page of tasks).",
    ),
});

const TASK_ID =
  "The task's job_id (or id), as task.create and task.list return it; a recurring series' id " +
  "names the series.";
/**
 * A task is named by `job_id` (the prototype's name) or `id`: either, or both alike; or by
 * the idempotency key its live task holds.
 */
const taskIdFields = {
  job_id: text("job_id", 64).optional().describe(TASK_ID),
  id: text("id", 64).optional().describe(`The same as job_id. ${TASK_ID}`),
  idempotency_key: text("idempotency_key", 256)
    .optional()
    .describe("Instead of job_id: the live task holding this idempotency key."),
};

export const taskIdInput = strict(taskIdFields);

export const rescheduleTaskInput = strict({
  ...taskIdFields,
  scheduled_at: text("scheduled_at", MAX_TIME_TEXT)
    .optional()
    .describe(
      `The new due time: ${WHEN}. Required for a task. For a series: its next occurrence ` +
        "becomes the rule's first at or after this time (the series restarts from it).",
    ),
  recurrence: text("recurrence", MAX_RULE_TEXT)
    .optional()
    .describe(`Series only: the new rule, ${RECURRENCE}.`),
  timezone: text("timezone", MAX_TIME_ZONE).optional().describe(TIMEZONE),
  locale: text("locale", MAX_LOCALE).optional().describe(LOCALE),
  expected_version: integer("expected_version", 0, Number.MAX_SAFE_INTEGER)
    .optional()
    .describe(
      "Apply only if the task is still at this version (from task.status); otherwise the " +
        "outcome is version-conflict.",
    ),
});
