import { MAX_INSTANT } from "../../core/time-input.js";
import {
  decide,
  matchesFilter,
  operationDueAt,
  type Operation,
  type OperationKind,
  type OperationStepResult,
  walkedTag,
} from "../../core/operation.js";
import {
  afterBatch,
  operationToRow,
  rowToOperation,
  type OperationRow,
} from "../../store/operation-row.js";
import type { OperationsListParams } from "../../store/store.js";
import { cancelPending, movePendingOrDead } from "./changes.js";
import type { SqliteContext } from "./context.js";
import { releaseFinished } from "./held.js";
import { CounterDeltas, rowToState, type JobTuple, type StoredState } from "./rows.js";
import { feedDrop } from "./feed.js";
import { isWalkCursor, stepCancelWalk } from "./operation-walk.js";
import { tagsDrop } from "./tags.js";

/**
 * Bulk operations on SQLite. Each function runs inside the caller's write transaction (the
 * store's `ctx.write`), so a batch's job changes and the record's counts and cursor commit
 * together: after a crash the operation resumes from a cursor that matches what was done.
 */

/**
 * What a kind does to the jobs of a batch it decided to act on, inside the batch's
 * transaction: how many it changed. The same transitions as the single-job calls
 * (changes.ts); a cancel's are set-based, one statement per table for the batch. A new kind
 * adds its action here.
 */
type Action = (
  ctx: SqliteContext,
  jobs: readonly StoredState[],
  op: Operation,
  now: number,
  d: CounterDeltas,
) => number;

/** A kind acting job by job: how many `act` changed. */
const eachJob =
  (
    act: (
      ctx: SqliteContext,
      j: StoredState,
      op: Operation,
      now: number,
      d: CounterDeltas,
    ) => boolean,
  ): Action =>
  (ctx, jobs, op, now, d) =>
    jobs.reduce((n, j) => (act(ctx, j, op, now, d) ? n + 1 : n), 0);

const ACTIONS: Readonly<Record<OperationKind, Action>> = {
  count: (_ctx, jobs) => jobs.length,
  cancel: (ctx, jobs, _op, now, d) => {
    cancelPending(ctx, jobs, now, d);
    return jobs.length;
  },
  reschedule: eachJob(moveTo),
  retry: eachJob(moveTo),
  erase: eachJob((ctx, j, _op, _now, d) => {
    eraseJob(ctx, j, d);
    return true;
  }),
};

/** A due time a shift would take outside the representable range leaves the job as it is. */
function moveTo(
  ctx: SqliteContext,
  j: StoredState,
  op: Operation,
  now: number,
  d: CounterDeltas,
): boolean {
  const dueAt = operationDueAt(op.params, j.job.dueAt, now);
  if (dueAt < 0 || dueAt > MAX_INSTANT) return false;
  return movePendingOrDead(ctx, j, dueAt, now, d) === null;
}

/**
 * Deletes a job that is not claimed with everything kept of it: its row, its outcome (or
 * its hot index entry), its key, its tag entries, its feed rows; its counters drop. Nothing of it is left.
 */
function eraseJob(ctx: SqliteContext, j: StoredState, d: CounterDeltas): void {
  const job = j.job;
  if (job.status === "pending") {
    ctx.s.hotDelete.run({ seq: j.seq, dueAt: job.dueAt });
    releaseFinished(ctx, j);
    d.pending(job.bucket, job.tenant, -1);
  } else {
    ctx.s.finishedDeleteByJob.run(job.dueAt, job.id);
  }
  d.status(job.tenant, job.status, -1);
  if (job.key !== null) ctx.s.liveKeyDelete.run(job.tenant, job.key, j.seq);
  tagsDrop(ctx.s, job);
  feedDrop(ctx.s, job);
  ctx.s.jobDeleteBySeq.run(j.seq);
}

/** Stores an operation record, unless its key is held (then that record). */
export function insertOperation(
  ctx: SqliteContext,
  op: Operation,
): { operation: Operation; created: boolean } {
  if (op.key !== null) {
    const held = ctx.s.operationByKey.get(op.tenant, op.key) as OperationRow | undefined;
    if (held) return { operation: rowToOperation(held), created: false };
  }
  ctx.s.operationInsert.run(operationToRow(op));
  return { operation: op, created: true };
}

export function getOperation(ctx: SqliteContext, id: string, tenant?: string): Operation | null {
  const row = ctx.s.operationById.get(id) as OperationRow | undefined;
  if (!row || (tenant !== undefined && row.tenant !== tenant)) return null;
  return rowToOperation(row);
}

export function listOperations(ctx: SqliteContext, p: OperationsListParams): Operation[] {
  const rows = ctx.s.operationsPage.all({
    before: p.beforeId ?? "\uffff",
    tenant: p.tenant ?? null,
    states: p.states === undefined ? null : JSON.stringify(p.states),
    limit: p.limit,
  }) as OperationRow[];
  return rows.map(rowToOperation);
}

export function cancelOperation(
  ctx: SqliteContext,
  p: { id: string; tenant?: string; now: number },
): Operation | null {
  const op = getOperation(ctx, p.id, p.tenant);
  if (!op || (op.state !== "queued" && op.state !== "running")) return op;
  const cancelled: Operation = { ...op, state: "cancelled", updatedAt: p.now, finishedAt: p.now };
  ctx.s.operationWrite.run(operationToRow(cancelled));
  ctx.s.operationWalkDrop.run(op.id);
  return cancelled;
}

/** One batch (see Store.operationStep). */
export function stepOperation(
  ctx: SqliteContext,
  p: { id: string; now: number; limit: number },
): OperationStepResult | null {
  const op = getOperation(ctx, p.id);
  if (!op) return null;
  if (op.state !== "queued" && op.state !== "running") return { operation: op, scanned: 0 };
  const tag = walkedTag(op.filter);
  if (tag !== undefined && op.kind === "cancel" && isWalkCursor(op.cursor)) {
    return stepCancelWalk(ctx, op, tag, p);
  }
  const rows = readBatch(ctx, op, tag, p.limit).map(rowToState);
  const matching = rows.filter((r) => matchesFilter(op.filter, r.job));
  const acted = matching.filter((r) => decide(op, r.job) === "act");
  const deltas = new CounterDeltas();
  const changed = ACTIONS[op.kind](ctx, acted, op, p.now, deltas);
  ctx.flush(deltas);
  const last = rows[rows.length - 1];
  const next = afterBatch(
    op,
    {
      scanned: rows.length,
      changed,
      skipped: matching.length - changed,
      cursor: last === undefined ? null : tag === undefined ? String(last.seq) : last.job.id,
      limit: p.limit,
    },
    p.now,
  );
  ctx.s.operationWrite.run(operationToRow(next));
  return { operation: next, scanned: rows.length };
}

/**
 * A batch's jobs after the cursor, as JOB_STATE_COLUMNS rows: with a tag (walkedTag), the
 * tenant's entries of it in job id order (operationStateByTag, the cursor a job id); else the
 * tenant's jobs in seq order (operationStateBySeq, the cursor a seq). A cancel by tag walks by
 * bucket instead (operation-walk.ts), but one begun before migration 13 (its cursor a job id),
 * and the other kinds stay in id order: they rewrite (reschedule, retry) or delete (erase)
 * each job's row, and consecutive rows share pages in id order (measured against the bucket
 * order in docs/benchmarks.md).
 */
function readBatch(
  ctx: SqliteContext,
  op: Operation,
  tag: string | undefined,
  limit: number,
): JobTuple[] {
  if (tag !== undefined) {
    return ctx.s.operationStateByTag.all({
      tenant: op.tenant,
      tag,
      afterId: op.cursor ?? "",
      limit,
    }) as JobTuple[];
  }
  const after = op.cursor === null ? 0 : Number(op.cursor);
  return ctx.s.operationStateBySeq.all(after, op.tenant, limit) as JobTuple[];
}
