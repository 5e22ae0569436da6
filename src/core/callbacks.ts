import { InvalidJobError } from "./errors.js";
import { isoInstant } from "./instant-text.js";
import type { Job, JobCallbacks, JsonValue, NewJob } from "./job.js";
import { isObject, prefixText, rejectUnknownFields, type FieldPrefix } from "./validate.js";
import { checkWebhookUrl } from "./webhook-url.js";

/**
 * Per-job outcome callbacks (issue 13 §5): webhook URLs a job names at schedule time, called
 * when an attempt of it settles with that outcome. A callback is not a side channel: the
 * store writes it as a one-shot webhook job, due at once, in the same transaction as the
 * outcome it reports (jobsSettle, a lease running out), so it is exactly as durable as the
 * outcome, signed and retried like any delivery, and held to the same address rules. A
 * callback job carries no callbacks of its own (no loops) and names the job it reports on
 * (`callbackOf`).
 *
 *  - `onSuccess`: the handler returned (status succeeded).
 *  - `onFailure`: an attempt failed and the job will be tried again (the handler threw, or
 *    its lease ran out, with attempts left): one call per failed attempt.
 *  - `onDead`: the job is dead (attempts exhausted, a PermanentJobError, no handler, or the
 *    last attempt's lease ran out).
 * A job cancelled or expired (claimed past `expireAfterMs`) calls nothing: it never ran.
 */
export type { JobCallbacks };

export const CALLBACK_FIELDS = ["onSuccess", "onFailure", "onDead"] as const;

/** What a callback reports: the outcome of one attempt. */
export type CallbackEvent = "succeeded" | "failed" | "dead";

const URL_FIELD: Record<CallbackEvent, (typeof CALLBACK_FIELDS)[number]> = {
  succeeded: "onSuccess",
  failed: "onFailure",
  dead: "onDead",
};

/** Checks one callback URL, naming its field; returns it as given. */
export type CallbackUrlCheck = (value: unknown, field: string) => string;

/** The library's check: an http(s) URL that can be sent as stored (webhook-url.ts). */
export const callbackUrlShape: CallbackUrlCheck = (value, field) =>
  checkWebhookUrl(value, field).text;

/**
 * Checks a job's `callbacks`: absent (undefined or null: none) or an object of `onSuccess`,
 * `onFailure` and `onDead` URLs, each checked by `checkUrl` (the service passes its webhook
 * target policy, so a private address is refused with the target's own message). Errors
 * name `callbacks.onSuccess` etc. Returns undefined when no URL is given.
 */
export function optionalCallbacks(
  value: unknown,
  prefix: FieldPrefix = "",
  checkUrl: CallbackUrlCheck = callbackUrlShape,
): JobCallbacks | undefined {
  if (value === undefined || value === null) return undefined;
  const field = `${prefixText(prefix)}callbacks`;
  if (!isObject(value)) {
    throw new InvalidJobError(field, "an object of onSuccess, onFailure and onDead URLs", value);
  }
  rejectUnknownFields(value, CALLBACK_FIELDS, `${field}.`);
  const out: Record<string, string> = {};
  for (const name of CALLBACK_FIELDS) {
    const url = value[name];
    if (url === undefined || url === null) continue;
    out[name] = checkUrl(url, `${field}.${name}`);
  }
  return Object.keys(out).length === 0 ? undefined : Object.freeze(out);
}

/** Callbacks as a job row stores them: JSON text, or null when there are none. */
export function callbacksColumn(c: JobCallbacks | null | undefined): string | null {
  return c === undefined || c === null ? null : JSON.stringify(c);
}

/** A row's callbacks column back (null when none). */
export function callbacksFromColumn(text: string | null | undefined): JobCallbacks | null {
  return text === null || text === undefined ? null : (JSON.parse(text) as JobCallbacks);
}

/** What one settled attempt was, as its callback reports it. */
export interface CallbackOutcome {
  readonly event: CallbackEvent;
  /** When the outcome was recorded (epoch ms): the callback is due then. */
  readonly now: number;
  /** When the attempt started, or null (a lease that ran out before it was recorded). */
  readonly firedAt: number | null;
  /** The attempt's error (failed, dead), else null. */
  readonly error: string | null;
  /** What the handler returned (succeeded), else null. */
  readonly result: JsonValue | null;
  /** failed: when the job is due again. */
  readonly retryAt?: number;
}

/**
 * The callback job reporting `o` on `job` (as it was claimed), or null when the job names no
 * URL for that outcome or is itself a callback. Both stores' writes and the engine's
 * settlements build it here, so every callback carries the same body: the job's id, key,
 * tenant, tags, target, its status after the outcome, attempts, last error or result and times.
 */
export function callbackJob(job: Job, o: CallbackOutcome, id: string): NewJob | null {
  if (job.callbackOf !== null || job.callbacks === null) return null;
  const url = job.callbacks[URL_FIELD[o.event]];
  if (url === undefined) return null;
  const finished = o.event !== "failed";
  const payload: JsonValue = {
    event: o.event,
    job: {
      id: job.id,
      tenant: job.tenant,
      key: job.key,
      tags: [...job.tags],
      target: job.target,
      status: finished ? o.event : "pending",
      attempts: job.attempts,
      maxAttempts: job.maxAttempts,
      lastError: o.error,
      result: o.result,
      dueAt: isoInstant(job.dueAt),
      createdAt: isoInstant(job.createdAt),
      firedAt: o.firedAt === null ? null : isoInstant(o.firedAt),
      finishedAt: finished ? isoInstant(o.now) : null,
      nextAttemptAt: o.retryAt === undefined ? null : isoInstant(o.retryAt),
      scheduleId: job.scheduleId,
    },
  };
  return {
    id,
    tenant: job.tenant,
    key: null,
    // the job's own tags, so every tag filter (list, count, bulk erase of a data subject,
    // a tag pause) finds the callback, whose payload repeats the job's data
    tags: job.tags,
    dueAt: o.now,
    payload,
    target: url,
    targetOptions: null,
    // retried as the job it reports on is (its backoff, its attempt budget)
    maxAttempts: job.maxAttempts,
    expireAfterMs: null,
    traceContext: job.traceContext,
    callbackOf: job.id,
  };
}
