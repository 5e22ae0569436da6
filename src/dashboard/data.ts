import type { Scheduler } from "../api/scheduler.js";
import type { MinuteActivity } from "../api/activity.js";
import { bucketOf } from "../core/buckets.js";
import { InvalidJobError } from "../core/errors.js";
import { isJobId } from "../core/ids.js";
import type { Job, JobStatus } from "../core/job.js";
import { parseDueTime } from "../core/time-input.js";
import { binCounts, binWidth, ZOOMS, type Bin } from "./bins.js";
import type { DeadCounter } from "./dead-counter.js";

const DAY = 86_400_000;
/** Widest window the future chart reads at once (bounds the counter rows read). */
const MAX_SPAN_MS = 400 * DAY;

/** The future of one tenant, by display bin. */
export interface FutureView {
  readonly now: number;
  readonly bucketWidthMs: number;
  readonly binMs: number;
  readonly from: number;
  readonly to: number;
  readonly bins: Bin[];
  /** Pending jobs in the window. */
  readonly total: number;
  /** Pending jobs in buckets before the current one (the catch-up backlog). */
  readonly overdue: number;
}

export interface FutureQuery {
  zoom?: string;
  from?: string;
  to?: string;
  bins?: string;
}

/**
 * Pending jobs per display bin from the current bucket forward, read from the per-bucket
 * counters the store keeps at write time (`bucketsCounts`), never by counting job rows: the
 * cost is the number of non-empty buckets in the window, whatever the backlog.
 */
export async function futureView(
  scheduler: Scheduler,
  tenant: string,
  q: FutureQuery,
): Promise<FutureView> {
  const store = scheduler.options.store;
  const now = scheduler.options.clock.now();
  const width = store.bucketWidthMs;
  const current = bucketOf(now, width);
  const maxBins = q.bins === undefined ? 120 : intParam(q.bins, "bins", 1, 1000);
  let start: number;
  let end: number;
  if (q.from !== undefined || q.to !== undefined) {
    start = q.from === undefined ? current : timeParam(q.from, "from", now);
    end = q.to === undefined ? start + DAY : timeParam(q.to, "to", now);
    if (end <= start) throw new InvalidJobError("to", `a time after from (${iso(start)})`, q.to);
    if (end - start > MAX_SPAN_MS) {
      throw new InvalidJobError("to", "at most 400 days after from", q.to);
    }
  } else {
    const zoom = q.zoom ?? "1d";
    const span = ZOOMS[zoom];
    if (span === undefined) {
      throw new InvalidJobError("zoom", `one of ${Object.keys(ZOOMS).join(", ")}`, zoom);
    }
    start = current;
    end = now + span;
  }
  const binMs = binWidth(end - start, width, maxBins);
  const from = Math.floor(start / binMs) * binMs;
  // Buckets before the current one are overdue: shown as one figure, not spread into bins.
  const firstBucket = Math.max(from, current);
  const t = { tenant };
  const [inWindow, late] = await Promise.all([
    store.bucketsCounts({ from: firstBucket, to: end, ...t }),
    store.bucketsCounts({ from: 0, to: current, ...t }),
  ]);
  const bins = binCounts(inWindow, from, end, binMs);
  return {
    now,
    bucketWidthMs: width,
    binMs,
    from,
    to: from + bins.length * binMs,
    bins,
    total: inWindow.reduce((n, b) => n + b.pending, 0),
    overdue: late.reduce((n, b) => n + b.pending, 0),
  };
}

/** What is happening now, for one tenant. */
export interface NowView {
  readonly now: number;
  /** Per-minute outcomes of jobs fired by this process, oldest first. */
  readonly minutes: MinuteActivity[];
  /** Lateness of the jobs this process fired over those minutes, in ms. */
  readonly lateness: { count: number; p50: number; p99: number; max: number };
  readonly counts: Record<JobStatus, number>;
  /** Pending jobs (the backlog), from the status counters. */
  readonly backlog: number;
  /** Claimed and not yet settled, by any node. */
  readonly inFlight: number;
  /** The pending job due earliest, when it is already due. */
  readonly oldestOverdue: { id: string; dueAt: number; lateByMs: number } | null;
  /**
   * Jobs that went dead in the last 24 hours as this process saw them (`since` is later than
   * a day ago when it started less than a day ago).
   */
  readonly deadLastDay: { count: number; since: number };
}

/**
 * Cheap reads only: status counters (`jobsCountByStatus`), the first pending job in due
 * order (one bucket, one index row), and in-memory counts of this process (per-minute
 * activity, dead in the last day).
 */
export async function nowView(
  scheduler: Scheduler,
  dead: DeadCounter,
  tenant: string,
  q: { minutes?: string },
): Promise<NowView> {
  const store = scheduler.options.store;
  const now = scheduler.options.clock.now();
  const minutes = q.minutes === undefined ? 30 : intParam(q.minutes, "minutes", 1, 60);
  const [counts, oldest] = await Promise.all([
    store.jobsCountByStatus({ tenant }),
    oldestOverdue(scheduler, tenant, now),
  ]);
  return {
    now,
    minutes: scheduler.activity.minutes(now, minutes, tenant),
    lateness: scheduler.activity.lateness(now, minutes, tenant),
    counts,
    backlog: counts.pending,
    inFlight: counts.claimed,
    oldestOverdue: oldest
      ? { id: oldest.id, dueAt: oldest.dueAt, lateByMs: now - oldest.dueAt }
      : null,
    deadLastDay: dead.lastDay(now, tenant),
  };
}

/**
 * The tenant's pending job due earliest, if it is due already. `jobsNextDue` (the head of the
 * hot index and the earliest unstaged bucket, O(1)) answers the usual case, nothing overdue
 * for anyone, without touching job rows; otherwise one listing of pending jobs due before
 * now stops at the first row, reading only the oldest bucket that holds one.
 */
async function oldestOverdue(
  scheduler: Scheduler,
  tenant: string,
  now: number,
): Promise<Job | null> {
  const store = scheduler.options.store;
  const next = await store.jobsNextDue({ now });
  const due = (t: number | null) => t !== null && t <= now;
  if (!due(next.earliestDue) && !due(next.nextUnstagedBucket)) return null;
  const [first] = await store.jobsList({ tenant, statuses: ["pending"], dueTo: now + 1, limit: 1 });
  return first ?? null;
}

/** A job as the jobs table shows it (no payload). */
export interface JobSummary {
  readonly id: string;
  readonly key: string | null;
  readonly status: JobStatus;
  readonly dueAt: number;
  readonly target: string;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly lastError: string | null;
  readonly version: number;
}

export function summarize(j: Job): JobSummary {
  return {
    id: j.id,
    key: j.key,
    status: j.status,
    dueAt: j.dueAt,
    target: j.target,
    attempts: j.attempts,
    maxAttempts: j.maxAttempts,
    lastError: j.lastError === null ? null : j.lastError.slice(0, 200),
    version: j.version,
  };
}

export interface JobsQuery {
  q?: string;
  status?: string;
  dueFrom?: string;
  dueTo?: string;
  cursor?: string;
  limit?: string;
  timeZone?: string;
}

export interface JobsPage {
  readonly jobs: JobSummary[];
  readonly nextCursor: string | null;
  /** With `q`: what matched ("id" or "key"), or null when nothing did. */
  readonly match?: "id" | "key" | null;
}

/**
 * A search: `q` is looked up as a job id, then as a live job's idempotency key (two index
 * reads). Without `q`, a page of `scheduler.list` with the status and due-range filters.
 */
export async function searchJobs(
  scheduler: Scheduler,
  tenant: string,
  q: JobsQuery,
): Promise<JobsPage> {
  const text = q.q?.trim();
  if (text !== undefined && text !== "") {
    if (isJobId(text)) {
      const job = await scheduler.get(text, { tenant });
      if (job) return { jobs: [summarize(job)], nextCursor: null, match: "id" };
    }
    const byKey = await scheduler.options.store.jobGetByKey({ tenant, key: text });
    if (byKey) return { jobs: [summarize(byKey)], nextCursor: null, match: "key" };
    return { jobs: [], nextCursor: null, match: null };
  }
  const now = scheduler.options.clock.now();
  const page = await scheduler.list({
    tenant,
    ...(q.status ? { status: q.status.split(",").map((s) => s.trim()) as JobStatus[] } : {}),
    ...(q.dueFrom ? { dueFrom: timeParam(q.dueFrom, "dueFrom", now, q.timeZone) } : {}),
    ...(q.dueTo ? { dueTo: timeParam(q.dueTo, "dueTo", now, q.timeZone) } : {}),
    ...(q.cursor ? { cursor: q.cursor } : {}),
    limit: q.limit === undefined ? 25 : intParam(q.limit, "limit", 1, 200),
  });
  return { jobs: page.jobs.map(summarize), nextCursor: page.nextCursor };
}

/** An integer query parameter in [min, max]. */
export function intParam(raw: string, field: string, min: number, max: number): number {
  const n = /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidJobError(field, `an integer from ${min} to ${max}`, raw);
  }
  return n;
}

/** A time query parameter: epoch ms digits, an ISO time, or what `parseDueTime` reads. */
export function timeParam(raw: string, field: string, now: number, timeZone?: string): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : raw;
  return parseDueTime(value, { now, field, ...(timeZone ? { timeZone } : {}) });
}

function iso(t: number): string {
  return new Date(t).toISOString();
}
