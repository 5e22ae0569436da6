import type pg from "pg";
import { JOB_STATUSES, type JobStatus } from "../../core/job.js";
import type { TagListParams, TagPage, TagQuery } from "../../store/store.js";
import { rowToJob, type JobRow } from "./rows.js";
import type { Statements } from "./statements.js";

/**
 * Listing and counting by tag on PostgreSQL: reads of job_tags (migration 7), whose entries
 * are written by the statements that write a job's tags (liveInsert, replace) and removed by
 * retention (historyDeleteOldest, partition drops), so no write here.
 */

/**
 * See Store.jobsListByTag: one statement reading at most `limit` entries; jobs not matching
 * the status and due filters are dropped before they are decoded.
 */
export async function listByTag(
  pool: pg.Pool,
  sql: Statements,
  p: TagListParams,
): Promise<TagPage> {
  const { rows } = await pool.query<JobRow>(sql.tagPage, [
    p.tenant,
    p.tag,
    p.afterId ?? "",
    p.limit,
  ]);
  const statuses = p.statuses === undefined ? null : new Set<JobStatus>(p.statuses);
  const from = p.dueFrom ?? Number.MIN_SAFE_INTEGER;
  const to = p.dueTo ?? Number.MAX_SAFE_INTEGER;
  const jobs = rows
    .filter(
      (r) => r.due_at >= from && r.due_at < to && (statuses === null || statuses.has(r.status)),
    )
    .map(rowToJob);
  const last = rows.length >= p.limit ? rows[rows.length - 1] : undefined;
  return { jobs, next: last === undefined ? null : last.id };
}

/** See Store.jobsCountByTag: one count over the tag's entries. */
export async function countByTag(pool: pg.Pool, sql: Statements, p: TagQuery): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(sql.tagCount, [
    p.tenant,
    p.tag,
    p.dueFrom ?? Number.MIN_SAFE_INTEGER,
    p.dueTo ?? Number.MAX_SAFE_INTEGER,
    statusFilter(p.statuses),
  ]);
  return Number(rows[0]?.n ?? 0);
}

/** The statuses to filter by, or null when every state counts (no table lookups then). */
function statusFilter(statuses: readonly JobStatus[] | undefined): JobStatus[] | null {
  if (statuses === undefined) return null;
  const set = new Set(statuses);
  return JOB_STATUSES.every((st) => set.has(st)) ? null : [...set];
}
