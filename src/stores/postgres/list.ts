import type pg from "pg";
import type { Job } from "../../core/job.js";
import { FINISHED_STATUSES, JOB_STATUSES } from "../../core/job.js";
import type { JobsListParams } from "../../store/store.js";
import { byDue, rowToJob, type JobRow } from "./rows.js";
import type { Statements } from "./statements.js";

/**
 * A page of jobs in (dueAt, id) order, merged from the three tables, each read by its
 * (due_at, id) order after the cursor and limited to the page (pending and history
 * partitions pruned to the due range; claimed jobs are few). Never a scan of the backlog.
 */
export async function listJobs(pool: pg.Pool, sql: Statements, p: JobsListParams): Promise<Job[]> {
  const statuses = new Set(p.statuses ?? JOB_STATUSES);
  const args = [
    p.dueFrom ?? Number.MIN_SAFE_INTEGER,
    p.dueTo ?? Number.MAX_SAFE_INTEGER,
    p.after?.dueAt ?? Number.MIN_SAFE_INTEGER,
    p.after?.id ?? "",
    p.tenant ?? null,
    p.limit,
  ];
  const finished = FINISHED_STATUSES.filter((st) => statuses.has(st));
  const parts = await Promise.all([
    statuses.has("pending") ? pool.query<JobRow>(sql.listPending, args) : null,
    statuses.has("claimed") ? pool.query<JobRow>(sql.listClaimed, args) : null,
    finished.length > 0 ? pool.query<JobRow>(sql.listHistory, [...args, finished]) : null,
  ]);
  return parts
    .flatMap((r) => r?.rows ?? [])
    .map(rowToJob)
    .sort(byDue)
    .slice(0, p.limit);
}
