import type { LeaseExpiryResult, Settlement, StaleLeasesParams } from "../../store/store.js";
import type { ChangeKind } from "../../core/change.js";
import { callbackJob } from "../../core/callbacks.js";
import type { NewJob } from "../../core/job.js";
import { insertJobs } from "./insert.js";
import type { SqliteContext } from "./context.js";
import { CounterDeltas, rowToJob, type JobTuple } from "./rows.js";

/** A live claim, as `claimOf` reads it. */
interface ClaimRow {
  seq: number;
  id: string;
  tenant: string;
  due_at: number;
  bucket: number;
  last_error: string | null;
  fired_at: number | null;
  attempts: number;
  fence: number;
  version: number;
}

/**
 * Records outcomes of claimed jobs; call inside a write transaction. Each applies only while
 * the job is still claimed under the settlement's fencing token. Outcomes become `finished`
 * rows (appended in due order); only a claim that ends without one (retry, release) writes
 * the job's own row.
 */
export function settleJobs(
  ctx: SqliteContext,
  settlements: readonly Settlement[],
  now: number,
): boolean[] {
  const deltas = new CounterDeltas();
  const succeeded = settleSucceeded(ctx, settlements, now, deltas);
  const out = settlements.map((st, i) => {
    if (st.outcome === "succeeded") return succeeded[i] ?? false;
    const c = ctx.s.claimOf.get(st.id, st.fence) as ClaimRow | undefined;
    if (!c) return false;
    if (st.outcome === "release") {
      // Nothing was attempted (never started, or infrastructure down): the attempt is given
      // back; an infrastructure release also moves the due time and records why.
      requeue(ctx, c, deltas, {
        kind: st.retryAt === undefined ? "released" : "deferred",
        ...(st.retryAt === undefined ? {} : { dueAt: st.retryAt }),
        attempts: c.attempts - 1,
        error: st.error ?? c.last_error,
        now,
      });
    } else if (st.outcome === "retry") {
      requeue(ctx, c, deltas, {
        kind: "failed",
        dueAt: st.retryAt,
        attempts: c.attempts,
        error: st.error,
        firedAt: st.firedAt,
        now,
      });
    } else {
      finish(ctx, c, deltas, st.outcome, st.error ?? null, st.firedAt, now);
    }
    return true;
  });
  ctx.flush(deltas);
  // each applied settlement's callback, in the same transaction as its outcome
  const callbacks = settlements.flatMap((st, i) => (out[i] && st.callback ? [st.callback] : []));
  if (callbacks.length > 0) insertJobs(ctx, callbacks, now);
  return out;
}

/**
 * The successes of a batch in two statements (outcome rows from the claims named by
 * (id, fence), then those claims deleted); returns applied flags by settlement index.
 */
function settleSucceeded(
  ctx: SqliteContext,
  settlements: readonly Settlement[],
  now: number,
  deltas: CounterDeltas,
): (boolean | undefined)[] {
  const batch: { i: string; f: number; r: string; t: number }[] = [];
  const index = new Map<string, number>();
  settlements.forEach((st, i) => {
    if (st.outcome !== "succeeded" || index.has(st.id)) return;
    batch.push({ i: st.id, f: st.fence, r: JSON.stringify(st.result), t: st.firedAt });
    index.set(st.id, i);
  });
  const applied: (boolean | undefined)[] = [];
  if (batch.length === 0) return applied;
  const rows = ctx.s.settleSucceededMany.all({ now, batch: JSON.stringify(batch) }) as {
    id: string;
    tenant: string;
    due_at: number;
    attempts: number;
  }[];
  if (rows.length === 0) return applied;
  ctx.s.claimsDeleteMany.run(JSON.stringify(rows.map((r) => r.id)));
  for (const r of rows) {
    applied[index.get(r.id)!] = true;
    deltas.move(r.tenant, "claimed", "succeeded", 0, 0);
    ctx.record(
      {
        tenant: r.tenant,
        id: r.id,
        kind: "succeeded",
        status: "succeeded",
        dueAt: r.due_at,
        attempts: r.attempts,
      },
      now,
    );
  }
  return applied;
}

/** Ends a claim with an outcome row: dead or expired. */
function finish(
  ctx: SqliteContext,
  c: ClaimRow,
  deltas: CounterDeltas,
  status: "dead" | "expired",
  error: string | null,
  firedAt: number | null,
  now: number,
): void {
  ctx.s.claimDelete.run(c.id);
  ctx.s.finishedInsert.run({
    seq: c.seq,
    dueAt: c.due_at,
    id: c.id,
    tenant: c.tenant,
    status,
    attempts: c.attempts,
    fence: c.fence,
    version: c.version + 1,
    error: error ?? c.last_error,
    firedAt: firedAt ?? c.fired_at,
    now,
  });
  deltas.move(c.tenant, "claimed", status, c.bucket, c.bucket);
  ctx.record(
    {
      tenant: c.tenant,
      id: c.id,
      kind: status,
      status,
      dueAt: c.due_at,
      attempts: c.attempts,
      error: error ?? c.last_error,
    },
    now,
  );
}

/**
 * Ends a claim with the job pending again (at a new due time for a retry): the claim's
 * token, attempts and version go back into the job's row, so the next claim's token is
 * greater than every earlier one.
 */
function requeue(
  ctx: SqliteContext,
  c: ClaimRow,
  deltas: CounterDeltas,
  next: {
    /** What the feed calls this return to pending. */
    kind: ChangeKind;
    dueAt?: number;
    attempts: number;
    error: string | null;
    firedAt?: number;
    now: number;
  },
): void {
  const dueAt = next.dueAt ?? c.due_at;
  const bucket = next.dueAt === undefined ? c.bucket : ctx.bucketOf(next.dueAt);
  ctx.s.claimDelete.run(c.id);
  ctx.s.jobRequeue.run({
    seq: c.seq,
    dueAt,
    bucket,
    attempts: next.attempts,
    fence: c.fence,
    version: c.version + 1,
    error: next.error,
    firedAt: next.firedAt ?? c.fired_at,
    now: next.now,
  });
  deltas.move(c.tenant, "claimed", "pending", c.bucket, bucket);
  ctx.record(
    {
      tenant: c.tenant,
      id: c.id,
      kind: next.kind,
      status: "pending",
      dueAt,
      attempts: next.attempts,
      error: next.kind === "released" ? null : next.error,
    },
    next.now,
  );
  ctx.placeInHot({ seq: c.seq, bucket, due_at: dueAt, tenant: c.tenant });
}

/**
 * Claimed jobs whose lease ran out: back to pending at their due time, or dead when out of
 * attempts. Call inside a write transaction.
 */
export function expireLeases(ctx: SqliteContext, now: number, limit: number): LeaseExpiryResult {
  const expired = ctx.s.leasesExpired.all(now, limit) as {
    id: string;
    fence: number;
    attempts: number;
    max_attempts: number;
    has_callbacks: number;
  }[];
  const callbacks: NewJob[] = [];
  const deltas = new CounterDeltas();
  let requeued = 0;
  let dead = 0;
  const error = "lease expired before the job was acknowledged";
  for (const e of expired) {
    const c = ctx.s.claimOf.get(e.id, e.fence) as ClaimRow | undefined;
    if (!c) continue;
    const last = e.attempts >= e.max_attempts;
    if (e.has_callbacks) {
      // read as claimed, before the outcome moves it (rare: only jobs naming callbacks)
      const job = rowToJob(ctx.s.jobById.get(e.id) as JobTuple);
      const cb = callbackJob(
        job,
        last
          ? { event: "dead", now, firedAt: job.firedAt, error, result: null }
          : { event: "failed", now, firedAt: job.firedAt, error, result: null, retryAt: c.due_at },
        ctx.newId(now),
      );
      if (cb) callbacks.push(cb);
    }
    if (last) {
      finish(ctx, c, deltas, "dead", error, null, now);
      dead++;
    } else {
      requeue(ctx, c, deltas, { kind: "requeued", attempts: c.attempts, error, now });
      requeued++;
    }
  }
  ctx.flush(deltas);
  if (callbacks.length > 0) insertJobs(ctx, callbacks, now);
  const next = ctx.s.leasesNextExpiry.get() as { at: number | null };
  return { requeued, dead, nextExpiresAt: next.at };
}

/**
 * Claims of an earlier incarnation of this node that stopped renewing: pending again at
 * their due time with the attempt given back, as a released claim. Call inside a write
 * transaction.
 */
export function releaseStale(ctx: SqliteContext, p: StaleLeasesParams): number {
  const stale = ctx.s.leasesStale.all({
    prefix: p.ownerPrefix,
    except: p.exceptOwner,
    expiresBy: p.expiresBy,
    limit: p.limit,
  }) as { id: string; fence: number }[];
  const deltas = new CounterDeltas();
  let released = 0;
  for (const e of stale) {
    const c = ctx.s.claimOf.get(e.id, e.fence) as ClaimRow | undefined;
    if (!c) continue;
    requeue(ctx, c, deltas, {
      kind: "released",
      attempts: c.attempts - 1,
      error: c.last_error,
      now: p.now,
    });
    released++;
  }
  ctx.flush(deltas);
  return released;
}
