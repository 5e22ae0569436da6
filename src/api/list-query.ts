import { InvalidJobError } from "../core/errors.js";
import { isJobId } from "../core/ids.js";
import { JOB_STATUSES, type Job, type JobStatus } from "../core/job.js";
import { assertTimeZone, parseDueTime } from "../core/time-input.js";
import { MAX_TAG_LENGTH, TAG_RULE } from "../core/tags.js";
import { rejectUnknownFields, requireObject, requireString } from "../core/validate.js";

/** Filters and paging of `list`. */
export interface ListQuery {
  /** One status or several. Default: all. */
  readonly status?: JobStatus | readonly JobStatus[];
  /** Due at or after (epoch ms, Date or ISO time). */
  readonly dueFrom?: number | Date | string;
  /** Due before (exclusive). */
  readonly dueTo?: number | Date | string;
  /** From a previous page's `nextCursor`. */
  readonly cursor?: string;
  /** Page size, 1 to 1000. Default 50. */
  readonly limit?: number;
  readonly tenant?: string;
  /** IANA zone for natural-language `dueFrom`/`dueTo`. Default UTC. */
  readonly timeZone?: string;
  /**
   * Only jobs carrying this tag, read from the tag index (cost tracks the tag's jobs, not
   * the backlog); the page is then in job id order (creation order), not due order.
   */
  readonly tag?: string;
}

/** What `countJobs` counts: the jobs of one tag, by status and due range. */
export type CountQuery = Omit<ListQuery, "cursor" | "limit" | "tag"> & { readonly tag: string };

export interface ParsedListQuery {
  readonly filter: {
    statuses?: JobStatus[];
    dueFrom?: number;
    dueTo?: number;
    tenant?: string;
    tag?: string;
  };
  readonly cursor?: string;
  readonly limit: number;
}

const FIELDS = ["status", "dueFrom", "dueTo", "cursor", "limit", "tenant", "timeZone", "tag"];

/** Longest cursor accepted: a real one (base64url of `[dueAt, id]`) is about 60 characters. */
export const MAX_CURSOR = 200;
const TENANT_FILTER_RULE = { max: 64 } as const;

/**
 * The listing filters as query-string parameters (readQuery rules), for every HTTP surface
 * that lists jobs (GET /v1/jobs, the dashboard's jobs table): `status` repeated or
 * comma-separated, numbers from their text, every text bounded; parseListQuery then reads
 * the times. `tenant` is not among them: over HTTP it always comes from the API key.
 */
export const LIST_QUERY_PARAMS = {
  status: { kind: "list", of: JOB_STATUSES },
  dueFrom: { kind: "time" },
  dueTo: { kind: "time" },
  cursor: { kind: "text", max: MAX_CURSOR },
  limit: { kind: "int", min: 1, max: 1000 },
  timeZone: { kind: "zone" },
  tag: { kind: "text", max: MAX_TAG_LENGTH },
} as const;

export function parseListQuery(raw: unknown, now: number): ParsedListQuery {
  const q = requireObject(raw, "query");
  rejectUnknownFields(q, FIELDS, "");
  const filter: ParsedListQuery["filter"] = {};
  if (q.status !== undefined) {
    const list = Array.isArray(q.status) ? q.status : [q.status];
    for (const s of list) {
      if (!JOB_STATUSES.includes(s as JobStatus)) {
        throw new InvalidJobError("status", `one of ${JOB_STATUSES.join(", ")}`, s);
      }
    }
    filter.statuses = list as JobStatus[];
  }

  if (q.timeZone !== undefined) assertTimeZone(q.timeZone, "timeZone");
  const zone = q.timeZone === undefined ? {} : { timeZone: q.timeZone };
  if (q.dueFrom !== undefined) {
    filter.dueFrom = parseDueTime(q.dueFrom, { now, field: "dueFrom", ...zone });
  }
  if (q.dueTo !== undefined) filter.dueTo = parseDueTime(q.dueTo, { now, field: "dueTo", ...zone });
  if (q.tenant !== undefined) filter.tenant = requireString(q.tenant, "tenant", TENANT_FILTER_RULE);
  if (q.tag !== undefined) filter.tag = requireString(q.tag, "tag", TAG_RULE);
  let limit = 50;
  if (q.limit !== undefined) {
    if (
      typeof q.limit !== "number" ||
      !Number.isInteger(q.limit) ||
      q.limit < 1 ||
      q.limit > 1000
    ) {
      throw new InvalidJobError("limit", "an integer from 1 to 1000", q.limit);
    }
    limit = q.limit;
  }
  if (q.cursor !== undefined) {
    if (typeof q.cursor !== "string" || q.cursor.length > MAX_CURSOR)
      throw new InvalidJobError("cursor", "a cursor returned by a previous page", q.cursor);
    if (filter.tag === undefined) decodeCursor(q.cursor);
    else decodeTagCursor(q.cursor);
    return { filter, cursor: q.cursor, limit };
  }
  return { filter, limit };
}

/** Opaque cursor: base64url of the last (dueAt, id) position. */
export function encodeCursor(job: Pick<Job, "dueAt" | "id">): string {
  return Buffer.from(JSON.stringify([job.dueAt, job.id])).toString("base64url");
}

export function decodeCursor(cursor: string): { dueAt: number; id: string } {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    // a safe integer: PostgreSQL refuses a bigint parameter past that with an error, not 400
    if (Array.isArray(v) && Number.isSafeInteger(v[0]) && isJobId(v[1])) {
      return { dueAt: v[0] as number, id: v[1] };
    }
  } catch {
    // fall through to the error below
  }
  throw new InvalidJobError("cursor", "a cursor returned by a previous page", cursor);
}

/** Opaque cursor of a listing by tag: base64url of the last job id read from the tag index. */
export function encodeTagCursor(afterId: string): string {
  return Buffer.from(JSON.stringify(["tag", afterId])).toString("base64url");
}

export function decodeTagCursor(cursor: string): string {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v[0] === "tag" && isJobId(v[1])) return v[1];
  } catch {
    // fall through to the error below
  }
  throw new InvalidJobError("cursor", "a cursor returned by a previous page of this tag", cursor);
}
