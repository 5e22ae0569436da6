import type Database from "better-sqlite3";
import type { Job } from "../../core/job.js";
import { FINISHED_STATUSES, JOB_STATUSES } from "../../core/job.js";
import type { JobsListParams } from "../../store/store.js";
import { rowToJob, type JobRow } from "./rows.js";
import type { SQL } from "./statements.js";

type Statements = Record<keyof typeof SQL, Database.Statement>;

/**
 * A page of jobs in (dueAt, id) order, merged from three sources that each have an index
 * in that order or are small: pending jobs bucket by bucket (jobs_pending_bucket, only the
 * buckets the counters say hold work in the range), claimed jobs (bounded by in-flight
 * work) and finished jobs (jobs_finished_due). Never a scan of the whole backlog.
 */
export function listJobs(s: Statements, widthMs: number, p: JobsListParams): Job[] {
  const statuses = new Set(p.statuses ?? JOB_STATUSES);
  const bounds = {
    from: p.dueFrom ?? Number.MIN_SAFE_INTEGER,
    to: p.dueTo ?? Number.MAX_SAFE_INTEGER,
    afterDue: p.after?.dueAt ?? Number.MIN_SAFE_INTEGER,
    afterId: p.after?.id ?? "",
    tenant: p.tenant ?? null,
    limit: p.limit,
  };
  const rows: JobRow[] = [];
  if (statuses.has("pending")) rows.push(...listPending(s, widthMs, bounds));
  if (statuses.has("claimed")) rows.push(...(s.listClaimed.all(bounds) as JobRow[]));
  const finished = FINISHED_STATUSES.filter((st) => statuses.has(st));
  if (finished.length > 0) {
    rows.push(
      ...(s.listFinished.all({ ...bounds, statuses: JSON.stringify(finished) }) as JobRow[]),
    );
  }
  rows.sort((a, b) => a.due_at - b.due_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return rows.slice(0, p.limit).map(rowToJob);
}

interface Bounds {
  from: number;
  to: number;
  afterDue: number;
  afterId: string;
  tenant: string | null;
  limit: number;
}

function listPending(s: Statements, widthMs: number, b: Bounds): JobRow[] {
  const start = Math.max(b.from, b.afterDue);
  const fromBucket = Math.floor(start / widthMs) * widthMs;
  const buckets = s.listBuckets.all({ fromBucket, to: b.to, tenant: b.tenant }) as {
    bucket: number;
  }[];
  const out: JobRow[] = [];
  for (const { bucket } of buckets) {
    const rows = s.listPendingInBucket.all({
      ...b,
      bucket,
      limit: b.limit - out.length,
    }) as JobRow[];
    out.push(...rows);
    if (out.length >= b.limit) break;
  }
  return out;
}
