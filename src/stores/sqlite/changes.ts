import type { Job } from "../../core/job.js";
import type { CancelResult, RescheduleParams, RescheduleResult } from "../../store/store.js";
import type { SqliteContext } from "./context.js";
import { releaseFinished } from "./held.js";
import { CounterDeltas, rowToJob, type JobTuple, type StoredJob } from "./rows.js";

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
  if (current.job.status !== "pending") return { outcome: "too-late", job: current.job };
  const deltas = new CounterDeltas();
  cancelPending(ctx, current, params.now, deltas);
  ctx.flush(deltas);
  return { outcome: "cancelled", job: reread(ctx, current.job.id) };
}

/**
 * The cancel transition of a job read as pending in this transaction, counters gathered in
 * `deltas` (the caller flushes them): shared by a single cancel and a bulk operation's batch.
 */
export function cancelPending(
  ctx: SqliteContext,
  current: StoredJob,
  now: number,
  deltas: CounterDeltas,
): void {
  const job = current.job;
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
    now,
  });
  ctx.s.hotDelete.run({ seq: current.seq, dueAt: job.dueAt });
  releaseFinished(ctx, current);
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
    now,
  );
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
  const deltas = new CounterDeltas();
  const holder = movePendingOrDead(ctx, current, params.dueAt, params.now, deltas);
  if (holder) return { outcome: "key-conflict", job, holder };
  ctx.flush(deltas);
  return { outcome: "rescheduled", job: reread(ctx, job.id) };
}

/**
 * The move of a job read in this transaction as pending (a reschedule) or dead (a retry)
 * to `dueAt`, counters gathered in `deltas`: shared by the single-job calls and a bulk
 * operation's batch. A dead job whose idempotency key another live job holds now is not
 * moved: that holder comes back (nothing was written).
 */
export function movePendingOrDead(
  ctx: SqliteContext,
  current: StoredJob,
  dueAt: number,
  now: number,
  deltas: CounterDeltas,
): Job | null {
  const job = current.job;
  const from = job.status === "pending" ? "pending" : "dead";
  const seq = current.seq;
  const bucket = ctx.bucketOf(dueAt);
  const target = { seq, dueAt, bucket, now };
  if (from === "pending") {
    ctx.s.jobReschedule.run(target);
    ctx.s.hotDelete.run({ seq, dueAt: job.dueAt });
  } else {
    if (job.key !== null) {
      const holder = ctx.s.jobByLiveKey.get(job.tenant, job.key) as JobTuple | undefined;
      if (holder) return rowToJob(holder);
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
  ctx.placeInHot({ seq, bucket, due_at: dueAt, tenant: job.tenant });
  deltas.move(job.tenant, from, "pending", job.bucket, bucket);
  ctx.record(
    {
      tenant: job.tenant,
      id: job.id,
      kind: from === "pending" ? "rescheduled" : "retried",
      status: "pending",
      dueAt,
      // a retry starts a fresh attempt budget (jobRetry sets attempts to 0)
      attempts: from === "pending" ? job.attempts : 0,
    },
    now,
  );
  return null;
}

/** The job as it stands after a change made in this transaction. */
function reread(ctx: SqliteContext, id: string): Job {
  const row = ctx.s.jobById.get(id) as JobTuple;
  return rowToJob(row);
}
