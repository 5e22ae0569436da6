import type { Job } from "../../core/job.js";
import { FINISHED_STATUSES, JOB_STATUSES } from "../../core/job.js";
import type { JobsListParams } from "../../store/store.js";
import { rowToJob, type JobTuple } from "./rows.js";
import type { Statements } from "./context.js";

/**
 * A page of jobs in (dueAt, id) order, merged from three sources that each have an index
 * in that order or are small: pending jobs bucket by bucket (jobs_bucket, only the buckets
 * the counters say hold work in the range), claimed jobs (the claims table: bounded by
 * in-flight work) and finished jobs (finished_due). Never a scan of the whole backlog.
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
  const rows: JobTuple[] = [];
  if (statuses.has("pending")) rows.push(...listPending(s, widthMs, bounds));
  if (statuses.has("claimed")) rows.push(...(s.listClaimed.all(bounds) as JobTuple[]));
  const finished = FINISHED_STATUSES.filter((st) => statuses.has(st));
  if (finished.length > 0) {
    rows.push(
      ...(s.listFinished.all({ ...bounds, statuses: JSON.stringify(finished) }) as JobTuple[]),
    );
  }
  const jobs = rows.map(rowToJob);
  jobs.sort((a, b) => a.dueAt - b.dueAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return jobs.slice(0, p.limit);
}

interface Bounds {
  from: number;
  to: number;
  afterDue: number;
  afterId: string;
  tenant: string | null;
  limit: number;
}

function listPending(s: Statements, widthMs: number, b: Bounds): JobTuple[] {
  const start = Math.max(b.from, b.afterDue);
  const fromBucket = Math.floor(start / widthMs) * widthMs;
  const buckets = s.listBuckets.all({ fromBucket, to: b.to, tenant: b.tenant }) as {
    bucket: number;
  }[];
  const out: JobTuple[] = [];
  for (const { bucket } of buckets) {
    const rows = s.listPendingInBucket.all({
      ...b,
      bucket,
      limit: b.limit - out.length,
    }) as JobTuple[];
    out.push(...rows);
    if (out.length >= b.limit) break;
  }
  return out;
}
