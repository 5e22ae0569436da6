import { InvalidJobError } from "../core/errors.js";
import { isoInstant } from "../core/instant-text.js";
import type { Job } from "../core/job.js";
import type { ScheduleInput } from "../core/schedule-input.js";
import { rejectUnknownFields, requireObject, requireString } from "../core/validate.js";
import { literalAddressRefusal } from "./webhook/address-guard.js";
import { RESERVED_HEADERS } from "./webhook/deliver.js";

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
  "target",
  "headers",
  "payload",
  "key",
  "maxAttempts",
  "expireAfterMs",
] as const;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const MAX_HEADERS = 20;

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
  checkTarget(body.target, `${p}target`, ctx.allowPrivateTargets);
  const headers =
    body.headers === undefined || body.headers === null
      ? null
      : checkHeaders(body.headers, `${p}headers`);
  const rest = { ...body };
  delete rest.headers;
  return {
    ...(rest as Omit<ScheduleInput, "tenant" | "targetOptions">),
    tenant: ctx.tenant,
    targetOptions: headers === null ? null : { headers },
  };
}

/**
 * The service's checks of a webhook target for the MCP tools (task.create's webhook_url and
 * webhook_headers), so a task created over /mcp is held to the same rules as POST /v1/jobs.
 */
export function mcpWebhookCheck(
  allowPrivate: boolean,
): (url: string, headers: Readonly<Record<string, string>> | null) => void {
  return (url, headers) => {
    checkTarget(url, "webhook_url", allowPrivate);
    if (headers !== null) checkHeaders(headers, "webhook_headers");
  };
}

function checkTarget(value: unknown, field: string, allowPrivate: boolean): void {
  const text = requireString(value, field, { max: 2048 });
  const expected = "an http(s) URL such as https://example.com/hook";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidJobError(field, expected, text);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidJobError(field, expected, text);
  }
  if (url.username !== "" || url.password !== "") {
    throw new InvalidJobError(field, "a URL without user:password (use headers)", text);
  }
  if (allowPrivate) return;
  const host = url.hostname.toLowerCase();
  if (literalAddressRefusal(url) !== null || host === "localhost" || host.endsWith(".localhost")) {
    throw new InvalidJobError(
      field,
      "a URL of a public host (private, loopback and link-local addresses are refused)",
      text,
    );
  }
}

function checkHeaders(value: unknown, field: string): Record<string, string> {
  const obj = requireObject(value, field);
  const entries = Object.entries(obj);
  if (entries.length > MAX_HEADERS) {
    throw new InvalidJobError(field, `at most ${MAX_HEADERS} headers`, obj);
  }
  const out: Record<string, string> = {};
  for (const [name, v] of entries) {
    if (!HEADER_NAME.test(name)) {
      throw new InvalidJobError(`${field}.${name}`, "a header name (an HTTP token)", name);
    }
    if (RESERVED_HEADERS.includes(name.toLowerCase())) {
      throw new InvalidJobError(
        `${field}.${name}`,
        `a header the service does not set itself (not ${RESERVED_HEADERS.join(", ")})`,
        name,
      );
    }
    if (typeof v !== "string" || v.length > 1024 || /[\r\n\0]/.test(v)) {
      throw new InvalidJobError(
        `${field}.${name}`,
        "a string of at most 1024 characters without line breaks",
        v,
      );
    }
    out[name] = v;
  }
  return out;
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
