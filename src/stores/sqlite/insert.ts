import { shardOf } from "../../core/ids.js";
import { newPendingJob, type Job, type NewJob } from "../../core/job.js";
import type { InsertResult } from "../../store/store.js";
import type { SqliteContext } from "./context.js";
import { CounterDeltas, rowToJob, type JobTuple } from "./rows.js";

/**
 * Stores jobs; call inside a write transaction. A key held by a live job, or by an earlier
 * job of the same call, returns that job instead; a key whose holder has finished passes to
 * the new job. Each job is placed here, in the bucket of its due time and the shard of its
 * id; jobs whose bucket is staged (or being staged) go straight into the hot index too.
 */
export function insertJobs(
  ctx: SqliteContext,
  jobs: readonly NewJob[],
  now: number,
): InsertResult[] {
  const deltas = new CounterDeltas();
  const staged = new Map<number, boolean>();
  const byKey = new Map<string, Job>();
  const results: InsertResult[] = [];
  for (const j of jobs) {
    if (j.key !== null) {
      const k = `${j.tenant}\u0000${j.key}`;
      const seen = byKey.get(k);
      if (seen) {
        results.push({ job: seen, created: false });
        continue;
      }
      const existing = ctx.s.jobByLiveKey.get(j.tenant, j.key) as JobTuple | undefined;
      if (existing) {
        const job = rowToJob(existing);
        byKey.set(k, job);
        results.push({ job, created: false });
        continue;
      }
    }
    const bucket = ctx.bucketOf(j.dueAt);
    const shard = shardOf(j.id, ctx.shardCount);
    const info = ctx.s.jobInsert.run(
      j.id,
      j.tenant,
      j.key,
      j.dueAt,
      bucket,
      shard,
      j.payloadJson ?? JSON.stringify(j.payload),
      j.target,
      j.targetOptions === null ? null : JSON.stringify(j.targetOptions),
      j.maxAttempts,
      j.expireAfterMs,
      now,
      now,
      j.traceContext ?? null,
      j.scheduleId ?? null,
      j.nominal ?? null,
    );
    const seq = Number(info.lastInsertRowid);
    if (j.key !== null) ctx.s.liveKeySet.run(j.tenant, j.key, seq);
    let isStaged = staged.get(bucket);
    if (isStaged === undefined) {
      isStaged = ctx.isStaged(bucket);
      staged.set(bucket, isStaged);
    }
    if (isStaged) ctx.s.hotInsert.run(j.dueAt, seq, j.tenant);
    deltas.pending(bucket, j.tenant, 1);
    deltas.status(j.tenant, "pending", 1);
    const job = newPendingJob(j, bucket, shard, now);
    ctx.record(
      {
        tenant: j.tenant,
        id: j.id,
        kind: "scheduled",
        status: "pending",
        dueAt: j.dueAt,
        attempts: 0,
      },
      now,
    );
    if (j.key !== null) byKey.set(`${j.tenant}\u0000${j.key}`, job);
    results.push({ job, created: true });
  }
  ctx.flush(deltas);
  return results;
}
