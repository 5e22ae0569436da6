import type { Command } from "commander";
import {
  createClient,
  DuetimeApiError,
  DuetimeConnectionError,
  type DuetimeClient,
  type Job as JobView,
  type ListJobsQuery,
} from "../client/index.js";
import { Described, InvalidJobError } from "../core/errors.js";
import type { JobStatus } from "../core/job.js";

import { EXIT } from "./errors.js";
import { formatInZone, formatRelative, labelled, tagsText } from "./format.js";

/**
 * The CLI as a client of `duetime serve`: with --url and --api-key (or DUETIME_URL and
 * DUETIME_KEY), add/list/show/cancel/stats call the HTTP API through `duetime/client`
 * instead of opening a database. Answers map onto the same exit codes as local use
 * (404 -> 3, 409 -> 4, 412 -> 5).
 */
export interface Remote {
  readonly url: string;
  readonly client: DuetimeClient;
}

interface RemoteOptions {
  url?: string;
  apiKey?: string;
}

/** The server named by --url or DUETIME_URL, if any. */
function serverUrl(cmd: Command): string | undefined {
  return cmd.optsWithGlobals<RemoteOptions>().url ?? (process.env.DUETIME_URL || undefined);
}

/** The server to talk to, or null to use the local database. */
export function remoteOf(cmd: Command): Remote | null {
  const url = serverUrl(cmd);
  if (url === undefined) return null;
  const g = cmd.optsWithGlobals<RemoteOptions>();
  const key = g.apiKey ?? (process.env.DUETIME_KEY || undefined);
  if (key === undefined) {
    throw new InvalidJobError("--api-key", "an API key with --url (or DUETIME_KEY)", undefined);
  }
  if (!/^https?:\/\//i.test(url)) {
    throw new InvalidJobError("--url", "the server's http(s) base URL", url);
  }
  const client = createClient({ url, apiKey: key });
  return { url: client.url, client };
}

/**
 * Refuses --url (or DUETIME_URL) for a command that works on the local database only, so it
 * never acts on ./duetime.db (or --db) while the user meant the server named.
 */
export function requireLocal(cmd: Command, what: string): void {
  const url = serverUrl(cmd);
  if (url !== undefined) {
    throw new InvalidJobError(
      "--url",
      `a local database (${what} of one job does not talk to a server yet; with a filter it does)`,
      url,
    );
  }
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

/**
 * Runs one client call. 2xx resolves to its answer; 400-class input errors throw
 * InvalidJobError (printed like local validation errors); 404/409/412 throw RemoteOutcome;
 * anything else (401, 429 or 503 past the client's retries, 5xx, no connection) throws an
 * Error naming the server.
 */
export async function callApi<T>(
  remote: Remote,
  call: (c: DuetimeClient) => Promise<T>,
): Promise<T> {
  try {
    return await call(remote.client);
  } catch (err) {
    if (err instanceof DuetimeConnectionError) throw new Error(err.message, { cause: err });
    if (!(err instanceof DuetimeApiError)) throw err;
    const { status } = err;
    if ((status === 400 || status === 413 || status === 415) && err.field !== "") {
      throw new InvalidJobError(err.field, err.expected, new Described(err.received));
    }
    if (status === 404 || status === 409 || status === 412) {
      const body = (typeof err.body === "object" && err.body !== null ? err.body : {}) as Record<
        string,
        unknown
      >;
      throw new RemoteOutcome(status, err.code, err.message, body);
    }
    throw new Error(`server ${remote.url}: HTTP ${status}: ${err.message}`, { cause: err });
  }
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
    ["tags", tagsText(job.tags)],
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

/** The query of GET /v1/jobs from list flags. */
export function listQuery(q: {
  status?: readonly JobStatus[];
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
  tag?: string;
  timeZone?: string;
}): ListJobsQuery {
  return {
    ...(q.status ? { status: q.status.join(",") } : {}),
    ...(q.from === undefined ? {} : { dueFrom: q.from }),
    ...(q.to === undefined ? {} : { dueTo: q.to }),
    ...(q.limit === undefined ? {} : { limit: q.limit }),
    ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
    ...(q.tag === undefined ? {} : { tag: q.tag }),
    ...(q.timeZone !== undefined && (q.from !== undefined || q.to !== undefined)
      ? { timeZone: q.timeZone }
      : {}),
  };
}
