import type { StageResult } from "../../store/store.js";
import { bucketOf } from "../../core/buckets.js";
import type { SqliteContext } from "./context.js";

/**
 * Copies pending jobs of buckets starting at or before `until` into the hot index, oldest
 * bucket first, in chunks
 * of one transaction and two statements each, at most `maxRows` rows per call. A cursor per
 * bucket (its last staged seq) lets a large bucket be staged over several calls, and a write
 * into a bucket being staged goes to hot directly, so nothing slips between chunks. The copy
 * reads the bucket index only (see stageCopy).
 */
export function stageBuckets(ctx: SqliteContext, until: number, maxRows: number): StageResult {
  let rows = 0;
  let buckets = 0;
  const stageChunk = (budget: number): number | null =>
    ctx.write("staging a bucket", () => {
      const next = ctx.s.stageNextBucket.get(until) as { bucket: number } | undefined;
      if (!next) {
        // Every bucket up to `until` is staged (or empty): raise the mark in the same
        // transaction as the check, so a job written into one of them goes to hot directly.
        ctx.s.stagedThroughRaise.run({ bucket: bucketOf(until, ctx.bucketWidthMs) });
        return null;
      }
      const bucket = next.bucket;
      const state = ctx.s.stagingGet.get(bucket) as { cursor: number } | undefined;
      const after = state?.cursor ?? 0;
      const end = ctx.s.stageChunkEnd.get({ bucket, after, budget }) as { seq: number } | undefined;
      const upTo = end?.seq ?? Number.MAX_SAFE_INTEGER;
      const copied = ctx.s.stageCopy.run({ bucket, after, upTo }).changes;
      // A full chunk counts its whole budget (passed-over rows were read too); the last one
      // what it copied. The cursor of a finished bucket no longer matters.
      rows += end ? budget : copied;
      ctx.s.stagingSet.run(bucket, end ? end.seq : after, end ? 0 : 1);
      if (!end) {
        // The oldest bucket left is done: every bucket up to it is staged.
        ctx.s.stagedThroughRaise.run({ bucket });
        buckets++;
      }
      return bucket;
    });
  for (;;) {
    const budget = maxRows - rows;
    const bucket = budget > 0 ? stageChunk(budget) : unstagedFrom(ctx, until);
    if (bucket === null) break;
    if (budget <= 0) return { rows, buckets, done: false, unstagedFrom: bucket };
  }
  ctx.s.stagingPrune.run();
  return { rows, buckets, done: true, unstagedFrom: null };
}

/** Start of the earliest bucket at or before `until` not fully staged, or null. */
function unstagedFrom(ctx: SqliteContext, until: number): number | null {
  const next = ctx.s.stageNextBucket.get(until) as { bucket: number } | undefined;
  return next ? next.bucket : null;
}
