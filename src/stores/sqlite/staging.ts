import type { StageResult } from "../../store/store.js";
import type { SqliteContext } from "./context.js";

/**
 * Copies pending jobs of buckets starting at or before `until` into the hot index, oldest
 * bucket first (jobs of the bucket already claimed or finished are passed over), in chunks of one transaction each, at most `maxRows` rows per call. A cursor
 * per bucket (its last staged seq) lets a large bucket be staged over several calls, and a
 * write into a bucket being staged goes to hot directly, so nothing slips between chunks.
 */
export function stageBuckets(ctx: SqliteContext, until: number, maxRows: number): StageResult {
  let rows = 0;
  let buckets = 0;
  const stageChunk = (budget: number): number | null =>
    ctx.write(() => {
      const next = ctx.s.stageNextBucket.get(until) as { bucket: number } | undefined;
      if (!next) return null;
      const state = ctx.s.stagingGet.get(next.bucket) as { cursor: number } | undefined;
      const found = ctx.s.stageRead.all(next.bucket, state?.cursor ?? 0, budget) as {
        due_at: number;
        seq: number;
        pending: 0 | 1;
      }[];
      for (const r of found) if (r.pending === 1) ctx.s.hotInsert.run(r.due_at, r.seq);
      rows += found.length;
      const cursor = found.length > 0 ? found[found.length - 1]!.seq : (state?.cursor ?? 0);
      const complete = found.length < budget;
      ctx.s.stagingSet.run(next.bucket, cursor, complete ? 1 : 0);
      if (complete) buckets++;
      return next.bucket;
    });
  for (;;) {
    const budget = maxRows - rows;
    const bucket = budget > 0 ? stageChunk(budget) : unstagedFrom(ctx, until);
    if (bucket === null) break;
    if (budget <= 0) return { rows, buckets, done: false, unstagedFrom: bucket };
  }
  ctx.s.stagingMarkEmpty.run({ b: Math.floor(until / ctx.bucketWidthMs) * ctx.bucketWidthMs });
  ctx.s.stagingPrune.run(until - 2 * ctx.bucketWidthMs);
  return { rows, buckets, done: true, unstagedFrom: null };
}

/** Start of the earliest bucket at or before `until` not fully staged, or null. */
function unstagedFrom(ctx: SqliteContext, until: number): number | null {
  const next = ctx.s.stageNextBucket.get(until) as { bucket: number } | undefined;
  return next ? next.bucket : null;
}
