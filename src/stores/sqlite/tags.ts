import { JOB_STATUSES, type JobStatus } from "../../core/job.js";
import type { TagListParams, TagPage, TagQuery } from "../../store/store.js";
import type { Statements } from "./context.js";
import { rowToJob, type JobTuple } from "./rows.js";

/**
 * The tag index of the SQLite store (table job_tags, migration 7): an entry per tag of a
 * job, written and removed in the transaction that writes or removes the job's tags, so
 * the index and the rows never disagree.
 */

/**
 * Index entries for a job's tags (call inside the write transaction that stores them), each
 * placed in the bulk walk's order by the job's bucket now (`walk_bucket`, migration 13).
 */
export function tagsAdd(
  s: Statements,
  job: { tenant: string; id: string; tags?: readonly string[] },
  seq: number,
  bucket: number,
): void {
  for (const tag of job.tags ?? []) s.tagInsert.run(job.tenant, tag, job.id, seq, bucket);
}

/** Removes a job's entries (its tags as its row holds them). */
export function tagsDrop(
  s: Statements,
  job: { tenant: string; id: string; tags: readonly string[] },
): void {
  for (const tag of job.tags) s.tagDelete.run(job.tenant, tag, job.id);
}

/**
 * A job's tags replaced (keyMode replace): the entries of tags it keeps stay as they are, so a
 * bulk operation walking one of them never meets the job a second time at a new place; the
 * tags it drops lose their entries and the new ones get entries at `bucket`.
 */
export function tagsReplace(
  s: Statements,
  job: { tenant: string; id: string; tags: readonly string[] },
  tags: readonly string[] | undefined,
  seq: number,
  bucket: number,
): void {
  const next = new Set(tags ?? []);
  const kept = new Set(job.tags);
  tagsDrop(s, { ...job, tags: job.tags.filter((t) => !next.has(t)) });
  tagsAdd(s, { ...job, tags: [...next].filter((t) => !kept.has(t)) }, seq, bucket);
}

/** Positions of the status and due time in a raw job row (JOB_COLUMN_NAMES). */
const STATUS = 4;
const DUE_AT = 5;
const ID = 1;

/**
 * See Store.jobsListByTag: one range read of at most `limit` entries; rows not matching the
 * status and due filters are dropped before they are decoded.
 */
export function listByTag(s: Statements, p: TagListParams): TagPage {
  const rows = s.tagPage.all({
    tenant: p.tenant,
    tag: p.tag,
    afterId: p.afterId ?? "",
    limit: p.limit,
  }) as JobTuple[];
  const statuses = p.statuses === undefined ? null : new Set<unknown>(p.statuses);
  const from = p.dueFrom ?? Number.MIN_SAFE_INTEGER;
  const to = p.dueTo ?? Number.MAX_SAFE_INTEGER;
  const jobs = rows
    .filter((r) => {
      const due = r[DUE_AT] as number;
      return due >= from && due < to && (statuses === null || statuses.has(r[STATUS]));
    })
    .map(rowToJob);
  const last = rows.length >= p.limit ? rows[rows.length - 1] : undefined;
  return { jobs, next: last === undefined ? null : (last[ID] as string) };
}

/** See Store.jobsCountByTag: one count over the tag's entries. */
export function countByTag(s: Statements, p: TagQuery): number {
  const row = s.tagCount.get({
    tenant: p.tenant,
    tag: p.tag,
    from: p.dueFrom ?? Number.MIN_SAFE_INTEGER,
    to: p.dueTo ?? Number.MAX_SAFE_INTEGER,
    statuses: statusFilter(p.statuses),
  }) as { n: number };
  return row.n;
}

/** The statuses as the JSON array the count takes, or null when every state counts. */
function statusFilter(statuses: readonly JobStatus[] | undefined): string | null {
  if (statuses === undefined) return null;
  const set = new Set(statuses);
  return JOB_STATUSES.every((st) => set.has(st)) ? null : JSON.stringify([...set]);
}
