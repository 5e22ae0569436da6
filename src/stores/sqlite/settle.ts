import type { LeaseExpiryResult, Settlement } from "../../store/store.js";
import type { PlacedRow, SqliteContext } from "./context.js";
import { CounterDeltas } from "./rows.js";

/**
 * Records outcomes of claimed jobs; call inside a write transaction. Each applies only while
 * the job is still claimed under the settlement's fencing token.
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
    if (st.outcome === "release") {
      const r = ctx.s.settleRelease.get({ id: st.id, fence: st.fence, now }) as
        PlacedRow | undefined;
      if (!r) return false;
      deltas.move(r.tenant, "claimed", "pending", r.bucket, r.bucket);
      ctx.placeInHot(r);
      return true;
    }
    if (st.outcome === "retry") {
      const r = ctx.s.settleRetry.get({
        id: st.id,
        fence: st.fence,
        retryAt: st.retryAt,
        bucket: st.bucket,
        error: st.error,
        now,
        firedAt: st.firedAt,
      }) as PlacedRow | undefined;
      if (!r) return false;
      deltas.move(r.tenant, "claimed", "pending", r.bucket, r.bucket);
      ctx.placeInHot(r);
      return true;
    }
    const r = ctx.s.settleFinish.get({
      id: st.id,
      fence: st.fence,
      status: st.outcome,
      result: null,
      error: st.error,
      now,
      firedAt: st.firedAt,
    }) as PlacedRow | undefined;
    if (!r) return false;
    deltas.move(r.tenant, "claimed", st.outcome, r.bucket, r.bucket);
    return true;
  });
  ctx.flush(deltas);
  return out;
}

/** The successes of a batch in one statement; returns applied flags by settlement index. */
function settleSucceeded(
  ctx: SqliteContext,
  settlements: readonly Settlement[],
  now: number,
  deltas: CounterDeltas,
): (boolean | undefined)[] {
  const batch: { i: string; f: number; r: string; t: number }[] = [];
  const index = new Map<string, number>();
  settlements.forEach((st, i) => {
    if (st.outcome !== "succeeded") return;
    batch.push({ i: st.id, f: st.fence, r: JSON.stringify(st.result), t: st.firedAt });
    index.set(st.id, i);
  });
  const applied: (boolean | undefined)[] = [];
  if (batch.length === 0) return applied;
  const rows = ctx.s.settleSucceededMany.all({ now, batch: JSON.stringify(batch) }) as {
    id: string;
    tenant: string;
  }[];
  for (const r of rows) {
    applied[index.get(r.id)!] = true;
    deltas.move(r.tenant, "claimed", "succeeded", 0, 0);
  }
  return applied;
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
  }[];
  const deltas = new CounterDeltas();
  let requeued = 0;
  let dead = 0;
  for (const e of expired) {
    const error = "lease expired before the job was acknowledged";
    if (e.attempts >= e.max_attempts) {
      const r = ctx.s.settleFinish.get({
        id: e.id,
        fence: e.fence,
        status: "dead",
        result: null,
        error,
        now: now,
        firedAt: null,
      }) as PlacedRow | undefined;
      if (r) {
        deltas.move(r.tenant, "claimed", "dead", r.bucket, r.bucket);
        dead++;
      }
      continue;
    }
    const r = ctx.s.leaseRequeue.get({ id: e.id, fence: e.fence, now: now, error }) as
      PlacedRow | undefined;
    if (r) {
      deltas.move(r.tenant, "claimed", "pending", r.bucket, r.bucket);
      ctx.placeInHot(r);
      requeued++;
    }
  }
  ctx.flush(deltas);
  return { requeued, dead };
}
