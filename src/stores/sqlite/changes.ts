import type { Job } from "../../core/job.js";
import type { CancelResult, RescheduleParams, RescheduleResult } from "../../store/store.js";
import type { SqliteContext } from "./context.js";
import { CounterDeltas, rowToJob, type JobTuple } from "./rows.js";

/**
 * Cancels a pending job (an outcome row; the job's own row is not written); call inside a
 * write transaction, which makes the state check and the change one step.
 */
export function cancelJob(
  ctx: SqliteContext,
  params: { id: string; tenant?: string; now: number },
): CancelResult {
  const current = ctx.ownedRow(params.id, params.tenant);
  if (!current) return { outcome: "not-found" };
  const job = current.job;
  if (job.status !== "pending") return { outcome: "too-late", job };
  ctx.s.finishedInsert.run({
    seq: current.seq,
    dueAt: job.dueAt,
    id: job.id,
    tenant: job.tenant,
    status: "cancelled",
    attempts: job.attempts,
    fence: job.fence,
    version: job.version + 1,
    error: job.lastError,
    firedAt: job.firedAt,
    now: params.now,
  });
  ctx.s.hotDelete.run({ seq: current.seq, dueAt: job.dueAt });
  const deltas = new CounterDeltas();
  deltas.move(job.tenant, "pending", "cancelled", job.bucket, job.bucket);
  ctx.record(
    {
      tenant: job.tenant,
      id: job.id,
      kind: "cancelled",
      status: "cancelled",
      dueAt: job.dueAt,
      attempts: job.attempts,
    },
    params.now,
  );
  ctx.flush(deltas);
  return { outcome: "cancelled", job: reread(ctx, job.id) };
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
  const job = current.job;
  if (job.status !== from) return { outcome: "too-late", job };
  if (params.expectedVersion !== undefined && job.version !== params.expectedVersion) {
    return { outcome: "version-conflict", job };
  }
  const seq = current.seq;
  const bucket = ctx.bucketOf(params.dueAt);
  const target = { seq, dueAt: params.dueAt, bucket, now: params.now };
  if (from === "pending") {
    ctx.s.jobReschedule.run(target);
    ctx.s.hotDelete.run({ seq, dueAt: job.dueAt });
  } else {
    if (job.key !== null) {
      const holder = ctx.s.jobByLiveKey.get(job.tenant, job.key) as JobTuple | undefined;
      if (holder) return { outcome: "key-conflict", job, holder: rowToJob(holder) };
    }
    const dead = ctx.s.deadOutcome.get(seq) as {
      rid: number;
      fence: number;
      version: number;
      last_error: string | null;
      fired_at: number | null;
    };
    ctx.s.finishedDelete.run(dead.rid);
    ctx.s.jobRetry.run({
      ...target,
      fence: dead.fence,
      version: dead.version + 1,
      error: dead.last_error,
      firedAt: dead.fired_at,
    });
    if (job.key !== null) ctx.s.liveKeySet.run(job.tenant, job.key, seq);
  }
  ctx.placeInHot({ seq, bucket, due_at: params.dueAt, tenant: job.tenant });
  const deltas = new CounterDeltas();
  deltas.move(job.tenant, from, "pending", job.bucket, bucket);
  ctx.flush(deltas);
  const moved = reread(ctx, job.id);
  ctx.record(
    {
      tenant: job.tenant,
      id: job.id,
      kind: from === "pending" ? "rescheduled" : "retried",
      status: "pending",
      dueAt: moved.dueAt,
      attempts: moved.attempts,
    },
    params.now,
  );
  return { outcome: "rescheduled", job: moved };
}

/** The job as it stands after a change made in this transaction. */
function reread(ctx: SqliteContext, id: string): Job {
  const row = ctx.s.jobById.get(id) as JobTuple;
  return rowToJob(row);
}
