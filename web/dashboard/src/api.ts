/** The dashboard's calls to the service, with the API key kept for this browser session. */

import type { JobView } from "../../../src/api/job-view.js";
import type { OperationView } from "../../../src/api/operation-view.js";
import type { PauseRow } from "../../../src/dashboard/pauses.js";
import type { ScheduleRow } from "../../../src/dashboard/schedules.js";

const KEY = "duetime.apiKey";

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY);
}
export function setApiKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}
export function clearApiKey(): void {
  sessionStorage.removeItem(KEY);
}

export type JobStatus = JobView["status"];
export const STATUSES: readonly JobStatus[] = [
  "pending",
  "claimed",
  "succeeded",
  "dead",
  "cancelled",
  "expired",
];

/**
 * A job as the service sends it: the one JSON view of a job (src/api/job-view.ts) that the
 * REST API, the CLI's --json and the MCP tools use too. Times are ISO 8601 texts.
 */
export type Job = JobView;

export interface FutureView {
  now: number;
  bucketWidthMs: number;
  binMs: number;
  from: number;
  to: number;
  bins: { start: number; pending: number }[];
  total: number;
  overdue: number;
}

export interface MinuteActivity {
  minute: number;
  succeeded: number;
  failed: number;
  dead: number;
  expired: number;
  latenessP50: number;
  latenessP99: number;
  latenessMax: number;
}

export interface NowView {
  now: number;
  minutes: MinuteActivity[];
  lateness: { count: number; p50: number; p99: number; max: number };
  counts: Record<JobStatus, number>;
  backlog: number;
  inFlight: number;
  oldestOverdue: { id: string; dueAt: number; lateByMs: number } | null;
  deadLastDay: { count: number; since: number };
}

export interface JobsPage {
  jobs: Job[];
  nextCursor: string | null;
  match?: "id" | "key" | null;
}

/**
 * A recurring series as the schedules page reads it (src/dashboard/schedules.ts): the rule as
 * given and in words, its zone, state, next occurrences and its last occurrence's outcome.
 */
export type Schedule = ScheduleRow;

export interface SchedulesPage {
  schedules: Schedule[];
  nextCursor: string | null;
}

/**
 * A bulk operation as the service sends it: the one operation view of the REST API and the
 * dashboard (src/api/operation-view.ts): filter, kind, state and counts, ISO times.
 */
export type Operation = OperationView;
export type OperationKind = Operation["kind"];

export interface OperationsPage {
  operations: Operation[];
  nextCursor: string | null;
}

/**
 * A pause as the pauses page reads it (src/dashboard/pauses.ts): the one pause view of the
 * REST API (src/api/pause-view.ts) and its scope in words.
 */
export type Pause = PauseRow;
export type PauseScope = Pause["scope"];

export interface PausesPage {
  pauses: Pause[];
  nextCursor: string | null;
}

/** The service's error body: `{ error: { code, field, expected, received, message }, job? }`. */
export interface ErrorBody {
  error?: { code: string; field: string; expected: string; received: string; message: string };
  outcome?: string;
  job?: Job;
  schedule?: Schedule;
}

/** A non-2xx answer. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.error?.message ?? `HTTP ${status}`);
  }
  get code(): string {
    return this.body.error?.code ?? "";
  }
}

/** Called on 401: the key is wrong or revoked. */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

export async function call<T>(
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  const headers: Record<string, string> = {
    accept: "application/json",
    authorization: `Bearer ${apiKey() ?? ""}`,
    ...init.headers,
  };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    method: init.method ?? "GET",
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const body = (await res.json().catch(() => ({}))) as T & ErrorBody;
  if (res.status === 401) onUnauthorized();
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s === "" ? "" : `?${s}`;
}
