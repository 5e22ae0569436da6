import { isoInstant } from "../core/instant-text.js";
import type { Job } from "../core/job.js";
import type { ScheduleInput } from "../core/schedule-input.js";
import { rejectUnknownFields, requireObject } from "../core/validate.js";
import { checkWebhookTarget } from "../core/webhook-target.js";

/**
 * The HTTP shape of a job and its translation to the library's ScheduleInput. The field
 * names are the library's (errors read the same everywhere) except two: `tenant` is never
 * accepted (it comes from the API key) and `headers` is the HTTP face of `targetOptions`.
 * Everything else is checked by the library's own validateScheduleInput.
 */
export const HTTP_JOB_FIELDS = [
  "dueAt",
  "delayMs",
  "timeZone",
  "locale",
  "target",
  "headers",
  "payload",
  "key",
  "maxAttempts",
  "expireAfterMs",
] as const;

export interface JobInputContext {
  readonly tenant: string;
  readonly allowPrivateTargets: boolean;
  /** Prefix of field names in errors ("jobs[3]."). */
  readonly prefix?: string;
}

/** Checks the HTTP-only parts of a job body and returns the library input. */
export function toScheduleInput(raw: unknown, ctx: JobInputContext): ScheduleInput {
  const p = ctx.prefix ?? "";
  const body = requireObject(raw, p === "" ? "body" : p.replace(/\.$/, ""));
  rejectUnknownFields(body, HTTP_JOB_FIELDS, p);
  const { headers } = checkWebhookTarget(
    { target: body.target, headers: body.headers },
    {
      allowPrivateTargets: ctx.allowPrivateTargets,
      fields: { target: `${p}target`, headers: `${p}headers` },
    },
  );
  const rest = { ...body };
  delete rest.headers;
  return {
    ...(rest as Omit<ScheduleInput, "tenant" | "targetOptions">),
    tenant: ctx.tenant,
    targetOptions: headers === null ? null : { headers },
  };
}

/** A job as the API shows it: ISO times, webhook headers, no engine internals. */
export interface JobView {
  id: string;
  tenant: string;
  key: string | null;
  status: Job["status"];
  dueAt: string;
  target: string;
  headers: Record<string, string> | null;
  payload: unknown;
  attempts: number;
  maxAttempts: number;
  expireAfterMs: number | null;
  version: number;
  lastError: string | null;
  lastResult: unknown;
  createdAt: string;
  updatedAt: string;
  firedAt: string | null;
  finishedAt: string | null;
}

export function jobView(job: Job): JobView {
  const headers = job.targetOptions?.headers;
  return {
    id: job.id,
    tenant: job.tenant,
    key: job.key,
    status: job.status,
    dueAt: iso(job.dueAt),
    target: job.target,
    headers:
      typeof headers === "object" && headers !== null ? (headers as Record<string, string>) : null,
    payload: job.payload,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    expireAfterMs: job.expireAfterMs,
    version: job.version,
    lastError: job.lastError,
    lastResult: job.lastResult,
    createdAt: iso(job.createdAt),
    updatedAt: iso(job.updatedAt),
    firedAt: job.firedAt === null ? null : iso(job.firedAt),
    finishedAt: job.finishedAt === null ? null : iso(job.finishedAt),
  };
}

const iso = isoInstant;
