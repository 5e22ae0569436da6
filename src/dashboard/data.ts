import type { Scheduler } from "../api/scheduler.js";
import type { MinuteActivity } from "../api/activity.js";
import { jobView, type JobView } from "../api/job-view.js";
import { bucketOf } from "../core/buckets.js";
import { InvalidJobError } from "../core/errors.js";
import { isoInstant } from "../core/instant-text.js";
import { isJobId } from "../core/ids.js";
import type { JobStatus } from "../core/job.js";
import { readQuery } from "../core/query-params.js";
import { LIST_QUERY_PARAMS } from "../api/list-query.js";
import { MAX_KEY_LENGTH } from "../core/schedule-input.js";
import { parseDueTime } from "../core/time-input.js";
import { binCounts, binWidth, ZOOM_NAMES, zoomSpan, type Bin } from "./bins.js";
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

/** Query of /v1/dashboard/future: a named `zoom` window, or `from`/`to`; `bins` at most. */
const FUTURE_QUERY = {
  zoom: { kind: "enum", of: ZOOM_NAMES },
  from: { kind: "time" },
  to: { kind: "time" },
  bins: { kind: "int", min: 1, max: 1000 },
} as const;

/**
 * Pending jobs per display bin from the current bucket forward, read from the per-bucket
 * counters the store keeps at write time (`bucketsCounts`), never by counting job rows: the
 * cost is the number of non-empty buckets in the window, whatever the backlog.
 */
export async function futureView(
  scheduler: Scheduler,
  tenant: string,
  query: unknown,
): Promise<FutureView> {
  const q = readQuery(query, FUTURE_QUERY);
  const now = scheduler.now();
  const width = scheduler.storeInfo().bucketWidthMs;
  const current = bucketOf(now, width);
  const maxBins = q.bins ?? 120;
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
    start = current;
    end = now + zoomSpan(q.zoom ?? "1d");
  }
  const binMs = binWidth(end - start, width, maxBins);
  const from = Math.floor(start / binMs) * binMs;
  // Buckets before the current one are overdue: shown as one figure, not spread into bins.
  const firstBucket = Math.max(from, current);
  const t = { tenant };
  const [inWindow, late] = await Promise.all([
    scheduler.bucketCounts({ from: firstBucket, to: end, ...t }),
    scheduler.bucketCounts({ from: 0, to: current, ...t }),
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

/** Query of /v1/dashboard/now: how many minutes of activity. */
const NOW_QUERY = { minutes: { kind: "int", min: 1, max: 60 } } as const;

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
 * Cheap reads only: status counters (`counts`), the first pending job in due order
 * (`oldestOverdue`: one bucket, one index row), and in-memory counts of this process (per-minute
 * activity, dead in the last day).
 */
export async function nowView(
  scheduler: Scheduler,
  dead: DeadCounter,
  tenant: string,
  query: unknown,
): Promise<NowView> {
  const q = readQuery(query, NOW_QUERY);
  const now = scheduler.now();
  const minutes = q.minutes ?? 30;
  const [counts, oldest] = await Promise.all([
    scheduler.counts({ tenant }),
    scheduler.oldestOverdue({ tenant }),
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
 * Query of /v1/dashboard/jobs: `q` (an id or an idempotency key, so as long as a key may be)
 * or the listing filters of GET /v1/jobs (the same rules), in pages of at most 200.
 */
const JOBS_QUERY = {
  q: { kind: "text", max: MAX_KEY_LENGTH },
  ...LIST_QUERY_PARAMS,
  limit: { kind: "int", min: 1, max: 200 },
} as const;

export interface JobsPage {
  /** In the one JSON view of a job, as GET /v1/jobs answers them. */
  readonly jobs: JobView[];
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
  query: unknown,
): Promise<JobsPage> {
  const { q, ...filters } = readQuery(query, JOBS_QUERY);
  const text = q?.trim();
  if (text !== undefined && text !== "") {
    if (isJobId(text)) {
      const job = await scheduler.get(text, { tenant });
      if (job) return { jobs: [jobView(job)], nextCursor: null, match: "id" };
    }
    const byKey = await scheduler.getByKey(text, { tenant });
    if (byKey) return { jobs: [jobView(byKey)], nextCursor: null, match: "key" };
    return { jobs: [], nextCursor: null, match: null };
  }
  // The scheduler reads the times (in `timeZone`) as it does for GET /v1/jobs.
  const page = await scheduler.list({ ...filters, tenant, limit: filters.limit ?? 25 });
  return { jobs: page.jobs.map(jobView), nextCursor: page.nextCursor };
}

/** A time query parameter (epoch ms already a number): an instant, as `parseDueTime` reads it. */
function timeParam(value: number | string, field: string, now: number, timeZone?: string): number {
  return parseDueTime(value, { now, field, ...(timeZone ? { timeZone } : {}) });
}

const iso = isoInstant;
