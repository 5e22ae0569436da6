import type { Job } from "../../core/job.js";
import type { CancelResult, RescheduleParams, RescheduleResult } from "../../store/store.js";
import type { SqliteContext } from "./context.js";
import { releaseFinished } from "./held.js";
import { CounterDeltas, rowToJob, type JobTuple, type StoredState } from "./rows.js";

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
  cancelPending(ctx, [current], params.now, deltas);
  ctx.flush(deltas);
  return { outcome: "cancelled", job: reread(ctx, current.job.id) };
}

/**
 * The walk_bucket of the tag entry a bulk batch met a job by (seq), for its feed row (see
 * migration 13); null when the batch did not walk a tag, as for a single call.
 */
export type WalkOf = (seq: number) => number | null;

/**
 * The cancel transition of jobs read as pending in this transaction, counters gathered in
 * `deltas` (the caller flushes them): shared by a single cancel and a bulk operation's batch,
 * whose outcome rows, feed rows and hot index entries are written by one statement each for
 * the batch (a statement per job was most of a bulk cancel's time).
 */
export function cancelPending(
  ctx: SqliteContext,
  jobs: readonly StoredState[],
  now: number,
  deltas: CounterDeltas,
  walkOf: WalkOf = () => null,
): void {
  if (jobs.length === 0) return;
  const seqs = JSON.stringify(jobs.map((j) => j.seq));
  const entries = JSON.stringify(jobs.map((j) => [j.seq, walkOf(j.seq)]));
  ctx.recordJobs({ kind: "cancelled", status: "cancelled" }, entries, now);
  ctx.s.finishedInsertCancelled.run({ seqs, now });
  const inHot = hotEntries(ctx, jobs);
  if (inHot.length > 0) ctx.s.hotDeleteMany.run(JSON.stringify(inHot));
  for (const current of jobs) {
    const job = current.job;
    releaseFinished(ctx, current);
    deltas.move(job.tenant, "pending", "cancelled", job.bucket, job.bucket);
  }
}

/**
 * The [due_at, seq] entries pending `jobs` may have in hot: only a staged bucket's jobs are
 * there (ctx.placeInHot, staging.ts), and a bulk batch's jobs are mostly far ahead. A few
 * jobs are not worth the two reads of the staged test: all their entries are tried.
 */
function hotEntries(ctx: SqliteContext, jobs: readonly StoredState[]): [number, number][] {
  const entries = (list: readonly StoredState[]) =>
    list.map((j): [number, number] => [j.job.dueAt, j.seq]);
  if (jobs.length <= 8) return entries(jobs);
  const staged = ctx.stagedTest();
  return entries(jobs.filter((j) => staged(j.job.bucket)));
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
  current: StoredState,
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
