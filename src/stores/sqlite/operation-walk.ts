import {
  decide,
  matchesFilter,
  type Operation,
  type OperationStepResult,
} from "../../core/operation.js";
import { afterBatch, operationToRow } from "../../store/operation-row.js";
import { cancelPending } from "./changes.js";
import type { SqliteContext } from "./context.js";
import { CounterDeltas, JOB_STATE_COLUMN_NAMES, rowToState, type JobTuple } from "./rows.js";

/**
 * A bulk cancel by tag on SQLite, walked by bucket (migration 13). Due times have nothing to
 * do with job ids, so a tag walked in id order gave each cancelled job's outcome row a page of
 * finished_due (kept in due order) of its own. Instead the walk alternates two phases, each a
 * batch (one transaction, its cursor with it):
 *  - plan: the tag's next entries in job id order (consecutive rows: cheap), PLAN_FACTOR
 *    times a batch's size a step, copied with each job's bucket into `operation_walk`
 *    (op_id, bucket, job_id), until it holds CHUNK entries or the tag has no more;
 *  - walk: batches from the front of `operation_walk` in (bucket, job id) order, cancelled
 *    and deleted from it, until it is empty; then the next plan.
 * A walk batch's jobs were due within a few buckets of one another, so its outcome rows, and
 * its feed rows (index changes_walk by bucket), land on a few neighbouring pages. Each entry
 * is copied once and walked once, whatever happens to its job meanwhile, so no job is met
 * twice; one whose job is gone by then is passed over. The cursor is "plan/<n>/<job id>" (n
 * entries planned so far in this chunk) or "walk/<job id>" (the tag planned through that id).
 */

/**
 * Most entries one chunk holds. The more, the fewer of its buckets a walk batch spans: at 1M
 * jobs of one tag `npm run bench -- bulk-cancel` ran at 50,277 jobs/s with 100,000 and 70,472
 * with 200,000 (2026-12-07, load 1.1-1.4). A cancelled operation deletes what it planned and
 * did not walk in one statement: 200,000 entries took 85 ms.
 */
const CHUNK = 200_000;
/**
 * Entries a planning step copies per job a walk batch takes: a planning step costs about a
 * walk batch (2.6 us an entry at 1M against about 11 us a cancelled job).
 */
const PLAN_FACTOR = 4;

/** Where an operationStateByWalk row's entry (bucket, job id) begins. */
const WALK_ENTRY = JOB_STATE_COLUMN_NAMES.length;

type Position =
  { phase: "plan"; planned: number; after: string } | { phase: "walk"; after: string };

/** Whether `cursor` is one of this walk's (null: not begun); a bare job id is an id walk's. */
export function isWalkCursor(cursor: string | null): boolean {
  return cursor === null || cursor.startsWith("plan/") || cursor.startsWith("walk/");
}

function positionOf(cursor: string | null): Position {
  if (cursor === null) return { phase: "plan", planned: 0, after: "" };
  if (cursor.startsWith("walk/")) return { phase: "walk", after: cursor.slice(5) };
  const rest = cursor.slice(5);
  const slash = rest.indexOf("/");
  return { phase: "plan", planned: Number(rest.slice(0, slash)), after: rest.slice(slash + 1) };
}

/** One batch of a cancel walked by bucket (see above), in the caller's write transaction. */
export function stepCancelWalk(
  ctx: SqliteContext,
  op: Operation,
  tag: string,
  p: { now: number; limit: number },
): OperationStepResult {
  const at = positionOf(op.cursor);
  if (at.phase === "walk") {
    const walked = walkBatch(ctx, op, p);
    if (walked !== null) return walked;
  }
  return plan(ctx, op, tag, at.phase === "plan" ? at : { planned: 0, after: at.after }, p);
}

/** Copies the tag's next entries into the walk; the record moves on, no job counted. */
function plan(
  ctx: SqliteContext,
  op: Operation,
  tag: string,
  at: { planned: number; after: string },
  p: { now: number; limit: number },
): OperationStepResult {
  const want = Math.min(p.limit * PLAN_FACTOR, CHUNK - at.planned);
  const range = { tenant: op.tenant, tag, afterId: at.after, limit: want };
  const end = ctx.s.operationWalkChunkEnd.get(range) as { last: string | null; n: number };
  let next: Operation;
  if (end.n === 0 && at.planned === 0) {
    next = { ...op, state: "done", updatedAt: p.now, finishedAt: p.now };
  } else {
    if (end.n > 0) {
      ctx.s.operationWalkPlan.run({ ...range, op: op.id, upTo: end.last });
    }
    const last = end.last ?? at.after;
    const planned = at.planned + end.n;
    const full = end.n < want || planned >= CHUNK;
    next = {
      ...op,
      state: "running",
      cursor: full ? `walk/${last}` : `plan/${planned}/${last}`,
      updatedAt: p.now,
    };
  }
  ctx.s.operationWrite.run(operationToRow(next));
  return { operation: next, scanned: end.n };
}

/** A batch from the walk's front, cancelled; null when the walk is empty (plan next). */
function walkBatch(
  ctx: SqliteContext,
  op: Operation,
  p: { now: number; limit: number },
): OperationStepResult | null {
  const front = ctx.s.operationStateByWalk.all({ op: op.id, limit: p.limit }) as JobTuple[];
  const last = front[front.length - 1];
  if (last === undefined) return null;
  const rows = front.filter((r) => r[0] !== null).map(rowToState);
  const matching = rows.filter((r) => matchesFilter(op.filter, r.job));
  const acted = matching.filter((r) => decide(op, r.job) === "act");
  const deltas = new CounterDeltas();
  cancelPending(ctx, acted, p.now, deltas, true);
  ctx.flush(deltas);
  const [bucket, jobId] = last.slice(WALK_ENTRY);
  ctx.s.operationWalkDelete.run({ op: op.id, bucket, jobId });
  const next = afterBatch(
    op,
    {
      scanned: rows.length,
      changed: acted.length,
      skipped: matching.length - acted.length,
      cursor: op.cursor,
      limit: p.limit,
      done: false,
    },
    p.now,
  );
  ctx.s.operationWrite.run(operationToRow(next));
  return { operation: next, scanned: rows.length };
}
