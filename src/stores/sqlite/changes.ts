import type { CancelResult, RescheduleParams, RescheduleResult } from "../../store/store.js";
import type { SqliteContext } from "./context.js";
import { CounterDeltas, rowToJob, type JobTuple } from "./rows.js";

/** Cancels a pending job; call inside a write transaction. */
export function cancelJob(
  ctx: SqliteContext,
  params: { id: string; tenant?: string; now: number },
): CancelResult {
  const current = ctx.ownedRow(params.id, params.tenant);
  if (!current) return { outcome: "not-found" };
  const row = ctx.s.jobCancel.get({ id: params.id, now: params.now }) as JobTuple | undefined;
  if (!row) return { outcome: "too-late", job: current.job };
  const cancelled = rowToJob(row);
  ctx.s.hotDelete.run(current.job.dueAt, current.seq);
  const deltas = new CounterDeltas();
  deltas.move(cancelled.tenant, "pending", "cancelled", current.job.bucket, current.job.bucket);
  ctx.flush(deltas);
  return { outcome: "cancelled", job: cancelled };
}

/**
 * Reschedule (pending -> pending) and retry (dead -> pending) share their bookkeeping; call
 * inside a write transaction.
 */
export function moveJob(
  ctx: SqliteContext,
  params: RescheduleParams,
  from: "pending" | "dead",
): RescheduleResult {
  const current = ctx.ownedRow(params.id, params.tenant);
  if (!current) return { outcome: "not-found" };
  if (current.job.status !== from) return { outcome: "too-late", job: current.job };
  if (params.expectedVersion !== undefined && current.job.version !== params.expectedVersion) {
    return { outcome: "version-conflict", job: current.job };
  }
  if (from === "dead" && current.job.key !== null) {
    const holder = ctx.s.jobByLiveKey.get(current.job.tenant, current.job.key) as
      JobTuple | undefined;
    if (holder) return { outcome: "key-conflict", job: current.job, holder: rowToJob(holder) };
  }
  const stmt = from === "pending" ? ctx.s.jobReschedule : ctx.s.jobRetry;
  const row = stmt.get({
    id: params.id,
    dueAt: params.dueAt,
    bucket: params.bucket,
    expectedVersion: params.expectedVersion ?? null,
    now: params.now,
  }) as JobTuple | undefined;
  if (!row) return { outcome: "too-late", job: current.job };
  const moved = rowToJob(row);
  if (from === "pending") ctx.s.hotDelete.run(current.job.dueAt, current.seq);
  ctx.placeInHot({ seq: current.seq, bucket: moved.bucket, due_at: moved.dueAt });
  const deltas = new CounterDeltas();
  deltas.move(moved.tenant, from, "pending", current.job.bucket, moved.bucket);
  ctx.flush(deltas);
  return { outcome: "rescheduled", job: moved };
}
