import type { Command } from "commander";
import { Described, InvalidJobError } from "../core/errors.js";
import type { JobStatus } from "../core/job.js";
import type { JobView } from "../service/job-input.js";
import { EXIT } from "./errors.js";
import { formatInZone, formatRelative, labelled } from "./format.js";

/**
 * The CLI as a client of `duetime serve`: with --url and --api-key (or DUETIME_URL and
 * DUETIME_KEY), add/list/show/cancel/stats call the HTTP API instead of opening a database.
 * Answers map onto the same exit codes as local use (404 -> 3, 409 -> 4, 412 -> 5).
 */
export interface Remote {
  readonly url: string;
  readonly key: string;
}

interface RemoteOptions {
  url?: string;
  apiKey?: string;
}

/** The server to talk to, or null to use the local database. */
export function remoteOf(cmd: Command): Remote | null {
  const g = cmd.optsWithGlobals<RemoteOptions>();
  const url = g.url ?? (process.env.DUETIME_URL || undefined);
  if (url === undefined) return null;
  const key = g.apiKey ?? (process.env.DUETIME_KEY || undefined);
  if (key === undefined) {
    throw new InvalidJobError("--api-key", "an API key with --url (or DUETIME_KEY)", undefined);
  }
  if (!/^https?:\/\//i.test(url)) {
    throw new InvalidJobError("--url", "the server's http(s) base URL", url);
  }
  return { url: withoutTrailingSlashes(url), key };
}

/** `url` without its trailing slashes; a scan from the end, as /\/+$/ is quadratic on "////x". */
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return url.slice(0, end);
}

/**
 * The server to talk to (as remoteOf), for a command that takes --tenant: with --url the API
 * key decides the tenant, so a --tenant is refused by name.
 */
export function remoteWithoutTenant(cmd: Command, tenant: string | undefined): Remote | null {
  const remote = remoteOf(cmd);
  if (remote && tenant !== undefined) {
    throw new InvalidJobError("--tenant", "no --tenant with --url (the API key decides)", tenant);
  }
  return remote;
}

/** An answer the command reports with an exit code (not-found, too-late...). */
export class RemoteOutcome extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }

  get exitCode(): number {
    if (this.status === 404) return EXIT.notFound;
    if (this.status === 409) return EXIT.tooLate;
    if (this.status === 412) return EXIT.versionConflict;
    return EXIT.failure;
  }
}

interface ErrorShape {
  error?: { code?: string; field?: string; expected?: string; received?: string; message?: string };
}

/**
 * Calls the API. 2xx resolves to the body; 400-class input errors throw InvalidJobError
 * (printed like local validation errors); 404/409/412 throw RemoteOutcome; anything else
 * (401, 429, 5xx, no connection) throws an Error naming the server.
 */
export async function callApi<T>(
  remote: Remote,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(remote.url + path, {
      method,
      headers: {
        authorization: `Bearer ${remote.key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new Error(
      `cannot reach ${remote.url}: ${(err as Error).cause ?? (err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${remote.url} answered HTTP ${res.status} with a body that is not JSON`);
  }
  if (res.ok) return parsed as T;
  const e = (parsed as ErrorShape).error ?? {};
  if ((res.status === 400 || res.status === 413 || res.status === 415) && e.field !== undefined) {
    throw new InvalidJobError(e.field, e.expected ?? "", new Described(e.received ?? ""));
  }
  if (res.status === 404 || res.status === 409 || res.status === 412) {
    throw new RemoteOutcome(
      res.status,
      e.code ?? "",
      e.message ?? `HTTP ${res.status}`,
      parsed as Record<string, unknown>,
    );
  }
  throw new Error(`server ${remote.url}: HTTP ${res.status}: ${e.message ?? text.slice(0, 200)}`);
}

/** A job of the API, described as `show` describes a local one. */
export function describeJobView(job: JobView, timeZone: string, now: number): string {
  const due = Date.parse(job.dueAt);
  const lines: [string, string][] = [
    ["id", job.id],
    ["status", job.status],
    ["due", `${job.dueAt}  (${formatRelative(due, now)})`],
    [`due (${timeZone})`, formatInZone(due, timeZone)],
    ["target", job.target],
    ["payload", JSON.stringify(job.payload)],
    ["key", job.key ?? "-"],
    ["tenant", job.tenant],
    ["attempts", `${job.attempts}/${job.maxAttempts}`],
    [
      "expire after",
      job.expireAfterMs === null ? "never (fire however late)" : `${job.expireAfterMs} ms`,
    ],
    ["version", String(job.version)],
    ["created", job.createdAt],
    ["updated", job.updatedAt],
  ];
  if (job.headers !== null) lines.push(["headers", JSON.stringify(job.headers)]);
  if (job.firedAt !== null) {
    lines.push(["fired", `${job.firedAt}  (lateness ${Date.parse(job.firedAt) - due} ms)`]);
  }
  if (job.finishedAt !== null) lines.push(["finished", job.finishedAt]);
  if (job.lastError !== null) lines.push(["last error", job.lastError]);
  if (job.lastResult !== null) lines.push(["last result", JSON.stringify(job.lastResult)]);
  return labelled(lines);
}

/** Query string of GET /v1/jobs from list flags. */
export function listPath(q: {
  status?: readonly JobStatus[];
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
  timeZone?: string;
}): string {
  const p = new URLSearchParams();
  if (q.status) p.set("status", q.status.join(","));
  if (q.from !== undefined) p.set("dueFrom", q.from);
  if (q.to !== undefined) p.set("dueTo", q.to);
  if (q.limit !== undefined) p.set("limit", String(q.limit));
  if (q.cursor !== undefined) p.set("cursor", q.cursor);
  if (q.timeZone !== undefined && (q.from !== undefined || q.to !== undefined)) {
    p.set("timeZone", q.timeZone);
  }
  const s = p.toString();
  return s === "" ? "/v1/jobs" : `/v1/jobs?${s}`;
}
