import type pg from "pg";
import { bucketOf } from "../../core/buckets.js";
import type { JobStatus } from "../../core/job.js";
import {
  decide,
  matchesFilter,
  operationDueAt,
  type Operation,
  type OperationCandidate,
  type OperationKind,
  type OperationStepResult,
  walkedTag,
} from "../../core/operation.js";
import { MAX_INSTANT } from "../../core/time-input.js";
import {
  afterBatch,
  OPERATION_COLUMNS,
  operationToRow,
  rowToOperation,
  type OperationRow,
} from "../../store/operation-row.js";
import type { OperationsListParams } from "../../store/store.js";
import type { OperationStatements } from "./operation-statements.js";

/** A job as a batch reads it (operation-statements.ts `jobs`). */
interface CandidateRow {
  shard: number;
  id: string;
  status: JobStatus;
  target: string;
  key: string | null;
  due_at: string | number;
  schedule_id: string | null;
  /** JSON text, or null: none. */
  tags: string | null;
}

/** The pool, or one transaction's client. */
type Queryable = pg.Pool | pg.ClientBase;

/** Bulk operations on PostgreSQL; the store runs each in its own transaction. */
export interface OperationDeps {
  readonly sql: OperationStatements;
  readonly bucketWidthMs: number;
}

function values(o: Operation): unknown[] {
  const row = operationToRow(o);
  return OPERATION_COLUMNS.map((c) => row[c]);
}

/**
 * Stores an operation record, unless its key is held (then that record). The insert waits
 * for a concurrent one of the same key to commit and then does nothing; the read after it,
 * a statement of its own, sees the committed holder.
 */
export async function insertOperation(
  c: Queryable,
  d: OperationDeps,
  op: Operation,
): Promise<{ operation: Operation; created: boolean }> {
  const { rows } = await c.query(d.sql.insert, values(op));
  if (rows.length > 0) return { operation: op, created: true };
  const held = await c.query<OperationRow>(d.sql.byKey, [op.tenant, op.key]);
  return { operation: rowToOperation(held.rows[0]!), created: false };
}

export async function getOperation(
  c: Queryable,
  d: OperationDeps,
  id: string,
  tenant?: string,
  lock = false,
): Promise<Operation | null> {
  const { rows } = await c.query<OperationRow>(lock ? d.sql.byIdLocked : d.sql.byId, [id]);
  const row = rows[0];
  if (!row || (tenant !== undefined && row.tenant !== tenant)) return null;
  return rowToOperation(row);
}

export async function listOperations(
  c: Queryable,
  d: OperationDeps,
  p: OperationsListParams,
): Promise<Operation[]> {
  const { rows } = await c.query<OperationRow>(d.sql.page, [
    p.beforeId ?? "\uffff",
    p.tenant ?? null,
    p.states ?? null,
    p.limit,
  ]);
  return rows.map(rowToOperation);
}

export async function cancelOperation(
  c: Queryable,
  d: OperationDeps,
  p: { id: string; tenant?: string; now: number },
): Promise<Operation | null> {
  const op = await getOperation(c, d, p.id, p.tenant, true);
  if (!op || (op.state !== "queued" && op.state !== "running")) return op;
  const cancelled: Operation = { ...op, state: "cancelled", updatedAt: p.now, finishedAt: p.now };
  await c.query(d.sql.write, values(cancelled));
  return cancelled;
}

/**
 * The jobs after the operation's cursor, as the batch would read them (no lock): a tag's
 * entries when the filter names tags (walkedTag), else the tenant's jobs by (shard, id).
 */
export async function readCandidates(
  c: Queryable,
  d: OperationDeps,
  op: Operation,
  limit: number,
): Promise<CandidateRow[]> {
  const tag = walkedTag(op.filter);
  if (tag !== undefined) {
    const args = [op.tenant, tag, op.cursor ?? "", limit];
    return (await c.query<CandidateRow>(d.sql.tagJobs, args)).rows;
  }
  const [shard, id] = parseCursor(op.cursor);
  const { rows } = await c.query<CandidateRow>(d.sql.jobs, [op.tenant, shard, id, limit]);
  return rows;
}

/**
 * The due times a batch would move jobs to (reschedule, retry), for the partitions the store
 * creates before the batch's transaction: creating one inside it would wait on the locks the
 * batch holds.
 */
export function movedBuckets(
  op: Operation,
  rows: readonly CandidateRow[],
  widthMs: number,
  now: number,
): number[] {
  if (op.kind !== "reschedule" && op.kind !== "retry") return [];
  if (op.params.shiftMs === undefined)
    return [bucketOf(operationDueAt(op.params, 0, now), widthMs)];
  return [...new Set(rows.map((r) => bucketOf(Number(r.due_at) + op.params.shiftMs!, widthMs)))];
}

/** One batch (see Store.operationStep), inside the caller's transaction. */
export async function stepOperation(
  c: Queryable,
  d: OperationDeps,
  p: { id: string; now: number; limit: number },
): Promise<OperationStepResult | null> {
  const op = await getOperation(c, d, p.id, undefined, true);
  if (!op) return null;
  if (op.state !== "queued" && op.state !== "running") return { operation: op, scanned: 0 };
  const rows = await readCandidates(c, d, op, p.limit);
  const picked: CandidateRow[] = [];
  let notActed = 0;
  for (const r of rows) {
    const j: OperationCandidate = {
      status: r.status,
      target: r.target,
      key: r.key,
      dueAt: Number(r.due_at),
      tags: r.tags === null ? [] : (JSON.parse(r.tags) as string[]),
      scheduleId: r.schedule_id,
    };
    if (!matchesFilter(op.filter, j)) continue;
    if (decide(op, j) === "act") picked.push(r);
    else notActed++;
  }
  const changed = await act(c, d, op, picked, p.now);
  const last = rows[rows.length - 1];
  const next = afterBatch(
    op,
    {
      scanned: rows.length,
      changed,
      skipped: notActed + (picked.length - changed),
      cursor: last ? batchCursor(op, last) : null,
      limit: p.limit,
    },
    p.now,
  );
  await c.query(d.sql.write, values(next));
  return { operation: next, scanned: rows.length };
}

/**
 * The kind's set statement over the jobs picked: how many it changed (fewer than picked
 * when some moved on since the read, a claim say: those are skipped). A new kind adds its
 * statement here.
 */
async function act(
  c: Queryable,
  d: OperationDeps,
  op: Operation,
  picked: readonly CandidateRow[],
  now: number,
): Promise<number> {
  if (picked.length === 0) return 0;
  const shards = picked.map((r) => r.shard);
  const ids = picked.map((r) => r.id);
  // where the batch read each job: the set forms reach a pending row by one index probe
  const readDue = picked.map((r) => Number(r.due_at));
  const n = async (sql: string, args: unknown[]) =>
    (await c.query<{ n: number }>(sql, args)).rows[0]?.n ?? 0;
  const kind: OperationKind = op.kind;
  switch (kind) {
    case "count":
      return picked.length;
    case "cancel":
      return n(d.sql.cancel, [shards, ids, op.tenant, now, readDue]);
    case "reschedule": {
      const moved = picked
        .map((r) => ({ r, due: operationDueAt(op.params, Number(r.due_at), now) }))
        .filter((m) => m.due >= 0 && m.due <= MAX_INSTANT);
      const dues = moved.map((m) => m.due);
      return n(d.sql.reschedule, [
        moved.map((m) => m.r.shard),
        moved.map((m) => m.r.id),
        dues,
        dues.map((due) => bucketOf(due, d.bucketWidthMs)),
        op.tenant,
        now,
        moved.map((m) => Number(m.r.due_at)),
      ]);
    }
    case "retry": {
      const due = operationDueAt(op.params, 0, now);
      await c.query(d.sql.retryKeysTake, [shards, ids, op.tenant]);
      return n(d.sql.retry, [shards, ids, op.tenant, due, bucketOf(due, d.bucketWidthMs), now]);
    }
    case "erase":
      return n(d.sql.erase, [shards, ids, op.tenant, readDue]);
  }
}

/** Where the next batch starts: the job id in a tag walk (readCandidates), else "shard:id". */
function batchCursor(op: Operation, last: CandidateRow): string {
  return walkedTag(op.filter) === undefined ? `${last.shard}:${last.id}` : last.id;
}

/** "shard:id" (ids hold no colon), or before every job. */
function parseCursor(cursor: string | null): [number, string] {
  if (cursor === null) return [-1, ""];
  const at = cursor.indexOf(":");
  return [Number(cursor.slice(0, at)), cursor.slice(at + 1)];
}
