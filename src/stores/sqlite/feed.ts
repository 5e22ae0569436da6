import {
  formatChangeCursor,
  type ChangeKind,
  type ChangePosition,
  type ChangesPage,
  type StoredChange,
} from "../../core/change.js";
import { ChangeCursorExpiredError } from "../../core/errors.js";
import type { JobStatus } from "../../core/job.js";
import type Database from "better-sqlite3";
import { CHANGE_BATCH_ROWS, changeInsertRows } from "./insert-statements.js";
import type { Statements } from "./statements.js";

/** Where retention's progress is kept in `meta`: the seq of the last change it removed. */
const PURGED_THROUGH = "changes_purged_through";

/** A change as the writes record it, before it has a seq. */
export interface ChangeRecord {
  readonly tenant: string;
  readonly id: string;
  readonly kind: ChangeKind;
  readonly status: JobStatus;
  readonly dueAt: number;
  readonly attempts: number;
  readonly error?: string | null;
}

/** The values of a change row, in changeInsertRows' column order. */
const CHANGE_VALUES = 8;

/**
 * The changes of one write transaction, gathered as the write goes and inserted at its end
 * (SqliteContext.write) in statements of up to CHANGE_BATCH_ROWS rows, in the order recorded,
 * so a claim of 500 jobs adds 5 statements, not 500. Cleared whether the transaction commits
 * or not.
 */
export class ChangeBuffer {
  private values: unknown[] = [];

  add(c: ChangeRecord, at: number): void {
    this.values.push(c.tenant, c.id, c.kind, c.status, c.dueAt, c.attempts, c.error ?? null, at);
  }

  /** Inserts what was gathered (inside the transaction) and empties the buffer. */
  flush(db: Database.Database): void {
    const values = this.values;
    if (values.length === 0) return;
    this.values = [];
    const step = CHANGE_BATCH_ROWS * CHANGE_VALUES;
    for (let i = 0; i < values.length; i += step) {
      const chunk = i === 0 && values.length <= step ? values : values.slice(i, i + step);
      changeInsertRows(db, chunk.length / CHANGE_VALUES).run(chunk);
    }
  }

  clear(): void {
    this.values = [];
  }
}

/**
 * Deletes a job's feed rows (an erase; call before its tag entries go): those under index
 * changes_job, and those a bulk cancel walking one of its tags wrote, under changes_walk at
 * that tag entry's walk_bucket (migration 13).
 */
export function feedDrop(
  s: Statements,
  job: { tenant: string; id: string; tags: readonly string[] },
): void {
  s.changesDeleteByJob.run(job.id, job.tenant);
  const walks = new Set<number>();
  for (const tag of job.tags) {
    const entry = s.tagWalkBucket.get(job.tenant, tag, job.id) as
      { walk_bucket: number } | undefined;
    if (entry) walks.add(entry.walk_bucket);
  }
  for (const walk of walks) s.changesDeleteByJobWalk.run(walk, job.id, job.tenant);
}

interface ChangeRow {
  seq: number;
  tenant: string;
  job_id: string;
  kind: ChangeKind;
  status: JobStatus;
  due_at: number;
  attempts: number;
  error: string | null;
  at: number;
}

/**
 * A page of the feed. The head (highest seq given) is read first and bounds the page, so a
 * page that comes back short may hand out the head as `next`: every change committed later
 * gets a higher seq (one writer at a time; AUTOINCREMENT never gives a seq twice). A quiet
 * tenant's cursor so moves on with the feed, past what retention removes.
 */
export function readChanges(
  s: Statements,
  p: { tenant?: string; after?: ChangePosition; limit: number },
): ChangesPage {
  const head = (s.changesHead.get() as { seq: number }).seq;
  const after = p.after === undefined ? 0 : Number(p.after.seq);
  if (p.after !== undefined) {
    const purged = purgedThrough(s);
    if (after < purged) {
      throw new ChangeCursorExpiredError(formatChangeCursor(p.after), String(purged));
    }
  }
  const args = { after, upTo: head, limit: p.limit };
  const rows = (
    p.tenant === undefined
      ? s.changesAfter.all(args)
      : s.changesAfterTenant.all({ ...args, tenant: p.tenant })
  ) as ChangeRow[];
  const changes = rows.map(toChange);
  const next =
    rows.length < p.limit ? String(Math.max(head, after)) : String(rows[rows.length - 1]!.seq);
  return { changes, next };
}

export function headCursor(s: Statements): string {
  return String((s.changesHead.get() as { seq: number }).seq);
}

/**
 * Removes the oldest changes made before `before`, at most `limit`, stopping at the first
 * newer one (feed order is commit order; a change recorded with an earlier clock behind a
 * later one waits for the next pass). Call inside a write transaction.
 */
export function purgeChanges(s: Statements, before: number, limit: number): number {
  const oldest = s.changesOldest.all(limit) as { seq: number; at: number }[];
  const stop = oldest.findIndex((r) => r.at >= before);
  const n = stop === -1 ? oldest.length : stop;
  if (n === 0) return 0;
  const last = oldest[n - 1]!.seq;
  s.changesDeleteThrough.run(last);
  s.metaSet.run(PURGED_THROUGH, String(last));
  return n;
}

function purgedThrough(s: Statements): number {
  const row = s.metaGet.get(PURGED_THROUGH) as { value: string } | undefined;
  return row ? Number(row.value) : 0;
}

function toChange(r: ChangeRow): StoredChange {
  return {
    cursor: String(r.seq),
    kind: r.kind,
    id: r.job_id,
    tenant: r.tenant,
    status: r.status,
    dueAt: r.due_at,
    attempts: r.attempts,
    error: r.error,
    at: r.at,
  };
}
