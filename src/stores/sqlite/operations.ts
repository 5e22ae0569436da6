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
import { cancelPending, movePendingOrDead, type WalkOf } from "./changes.js";
import { feedDrop } from "./feed.js";
import type { SqliteContext } from "./context.js";
import { releaseFinished } from "./held.js";
import {
  CounterDeltas,
  JOB_STATE_COLUMN_NAMES,
  rowToState,
  type JobTuple,
  type StoredState,
} from "./rows.js";
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
  walkOf: WalkOf,
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
  cancel: (ctx, jobs, _op, now, d, walkOf) => {
    cancelPending(ctx, jobs, now, d, walkOf);
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
  feedDrop(ctx.s, job);
  tagsDrop(ctx.s, job);
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
  const batch = readBatch(ctx, op, walkedTag(op.filter), p.limit);
  const rows = batch.rows.map(rowToState);
  const matching = rows.filter((r) => matchesFilter(op.filter, r.job));
  const acted = matching.filter((r) => decide(op, r.job) === "act");
  const deltas = new CounterDeltas();
  const changed = ACTIONS[op.kind](ctx, acted, op, p.now, deltas, batch.walkOf);
  ctx.flush(deltas);
  const next = afterBatch(
    op,
    {
      scanned: rows.length,
      changed,
      skipped: matching.length - changed,
      cursor: batch.cursor,
      limit: p.limit,
    },
    p.now,
  );
  ctx.s.operationWrite.run(operationToRow(next));
  return { operation: next, scanned: rows.length };
}

/** A batch's rows (JOB_STATE_COLUMNS) and the cursor after its last one (null: none read). */
interface Batch {
  readonly rows: JobTuple[];
  readonly cursor: string | null;
  /** The walk_bucket of the tag entry each job was met by, in a tag walk. */
  readonly walkOf: WalkOf;
}

const NO_WALK: WalkOf = () => null;

/** Position of the tag entry's walk_bucket in an operationStateByTagWalk row. */
const WALK_BUCKET = JOB_STATE_COLUMN_NAMES.length;

/**
 * Whether a kind walks a tag by (walk_bucket, job id) rather than by job id. A cancel writes
 * outcome rows (index finished_due, in due order) and feed rows, which the bucket order keeps
 * on neighbouring pages. The kinds that rewrite (reschedule, retry) or delete (erase) each
 * job's row are cheaper in id order, where consecutive rows share pages: 200k jobs of one
 * tag back to back, reschedule 16.3 us of CPU a job in id order against 25.8 in bucket
 * order, erase 25.5 against 35.1 (docs/benchmarks.md). A count only reads.
 */
function walksByBucket(kind: Operation["kind"]): boolean {
  return kind === "cancel";
}

/**
 * A batch's jobs after the cursor. With a tag (walkedTag), the tenant's entries of it: for a
 * cancel in the walk's order, (walk_bucket, job id) (operationStateByTagWalk; the cursor
 * "<walk_bucket>/<job id>"), else in job id order (operationStateByTag; the cursor a job id,
 * as a cancel begun before migration 13 keeps): a job keeps its id and its entries through
 * every transition, so no job is met twice. Without a tag, the tenant's jobs in seq order
 * (operationStateBySeq, the cursor a seq).
 */
function readBatch(
  ctx: SqliteContext,
  op: Operation,
  tag: string | undefined,
  limit: number,
): Batch {
  const cursorOf = (rows: JobTuple[], at: (r: JobTuple) => string): string | null => {
    const last = rows[rows.length - 1];
    return last === undefined ? null : at(last);
  };
  if (tag === undefined) {
    const after = op.cursor === null ? 0 : Number(op.cursor);
    const rows = ctx.s.operationStateBySeq.all(after, op.tenant, limit) as JobTuple[];
    return { rows, cursor: cursorOf(rows, (r) => String(r[0])), walkOf: NO_WALK };
  }
  const walk = walksByBucket(op.kind) ? walkPosition(op.cursor) : null;
  if (walk === null) {
    const rows = ctx.s.operationStateByTag.all({
      tenant: op.tenant,
      tag,
      afterId: op.cursor ?? "",
      limit,
    }) as JobTuple[];
    return { rows, cursor: cursorOf(rows, (r) => r[1] as string), walkOf: NO_WALK };
  }
  const rows = ctx.s.operationStateByTagWalk.all({
    tenant: op.tenant,
    tag,
    afterBucket: walk.bucket,
    afterId: walk.id,
    limit,
  }) as JobTuple[];
  const walks = new Map(rows.map((r) => [r[0] as number, r[WALK_BUCKET] as number]));
  return {
    rows,
    cursor: cursorOf(rows, (r) => `${r[WALK_BUCKET] as number}/${r[1] as string}`),
    walkOf: (seq) => walks.get(seq) ?? null,
  };
}

/**
 * Where a cancel's tag walk stands: before every entry for no cursor, after (walk_bucket, id)
 * for "<walk_bucket>/<id>"; null for a bare job id (a walk in job id order, see readBatch).
 */
function walkPosition(cursor: string | null): { bucket: number; id: string } | null {
  if (cursor === null) return { bucket: Number.MIN_SAFE_INTEGER, id: "" };
  const slash = cursor.indexOf("/");
  if (slash < 0) return null;
  return { bucket: Number(cursor.slice(0, slash)), id: cursor.slice(slash + 1) };
}
