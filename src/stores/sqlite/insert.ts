import { shardOf } from "../../core/ids.js";
import { newPendingJob, replacementDueAt, type Job, type NewJob } from "../../core/job.js";
import type { InsertResult } from "../../store/store.js";
import { tagsColumn } from "../../core/tags.js";
import { callbacksColumn } from "../../core/callbacks.js";
import type { SqliteContext } from "./context.js";
import { tagsAdd, tagsDrop } from "./tags.js";
import { pauseCovering } from "../../core/pause.js";
import { activePauses, holdJobs } from "./held.js";
import { CounterDeltas, rowSeq, rowToJob, type JobTuple } from "./rows.js";

/**
 * Stores jobs; call inside a write transaction (which makes each key's check and change one
 * step). A key held by a live job answers by the job's keyMode (see Store.jobsInsert); a key
 * held by an earlier job of the same call returns that job; a key whose holder has finished
 * passes to the new job. Each job is placed here, in the bucket of its due time and the shard of its
 * id; jobs whose bucket is staged (or being staged) go straight into the hot index too. A
 * job an active pause covers is stored held (pauses.ts): out of the hot index.
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
  const pauses = activePauses(ctx);
  const toHold = new Map<
    string,
    { seq: number; id: string; tenant: string; dueAt: number; attempts: number }[]
  >();
  for (const j of jobs) {
    if (j.key !== null) {
      const k = `${j.tenant}\u0000${j.key}`;
      const seen = byKey.get(k);
      if (seen) {
        results.push({ job: seen, created: false, outcome: "existing" });
        continue;
      }
      const existing = ctx.s.jobByLiveKey.get(j.tenant, j.key) as JobTuple | undefined;
      if (existing) {
        const r = answerHolder(ctx, rowSeq(existing), rowToJob(existing), j, now, deltas);
        byKey.set(k, r.job);
        results.push(r);
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
      tagsColumn(j.tags),
      callbacksColumn(j.callbacks),
      j.callbackOf ?? null,
    );
    const seq = Number(info.lastInsertRowid);
    tagsAdd(ctx.s, j, seq);
    if (j.key !== null) ctx.s.liveKeySet.run(j.tenant, j.key, seq);
    let isStaged = staged.get(bucket);
    if (isStaged === undefined) {
      isStaged = ctx.isStaged(bucket);
      staged.set(bucket, isStaged);
    }
    const pause = pauses.length > 0 ? pauseCovering(pauses, j) : undefined;
    if (isStaged && !pause) ctx.s.hotInsert.run(j.dueAt, seq, j.tenant);
    deltas.pending(bucket, j.tenant, 1);
    deltas.status(j.tenant, "pending", 1);
    const created = newPendingJob(j, bucket, shard, now);
    const job = pause ? { ...created, pausedBy: pause.id } : created;
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
    if (pause) {
      const held = { seq, id: j.id, tenant: j.tenant, dueAt: j.dueAt, attempts: 0 };
      toHold.set(pause.id, [...(toHold.get(pause.id) ?? []), held]);
    }
    if (j.key !== null) byKey.set(`${j.tenant}\u0000${j.key}`, job);
    results.push({ job, created: true, outcome: "created" });
  }
  holdJobs(ctx, toHold, now);
  ctx.flush(deltas);
  return results;
}

/**
 * The live holder of a key met by a new job: kept (`keep`), too late (claimed), or replaced
 * in place: its row takes the new definition (tags included: its index entries are replaced) and moves between buckets and the hot index as
 * a reschedule does.
 */
function answerHolder(
  ctx: SqliteContext,
  seq: number,
  holder: Job,
  j: NewJob,
  now: number,
  deltas: CounterDeltas,
): InsertResult {
  if ((j.keyMode ?? "keep") === "keep") return { job: holder, created: false, outcome: "existing" };
  if (holder.status !== "pending") return { job: holder, created: false, outcome: "too-late" };
  const dueAt = replacementDueAt(holder, j);
  const bucket = ctx.bucketOf(dueAt);
  ctx.s.jobReplace.run({
    seq,
    dueAt,
    bucket,
    payload: j.payloadJson ?? JSON.stringify(j.payload),
    target: j.target,
    targetOptions: j.targetOptions === null ? null : JSON.stringify(j.targetOptions),
    maxAttempts: j.maxAttempts,
    expireAfterMs: j.expireAfterMs,
    traceContext: j.traceContext ?? null,
    tags: tagsColumn(j.tags),
    callbacks: callbacksColumn(j.callbacks),
    now,
  });
  tagsDrop(ctx.s, holder);
  tagsAdd(ctx.s, { tenant: holder.tenant, id: holder.id, tags: j.tags }, seq);
  ctx.s.hotDelete.run({ seq, dueAt: holder.dueAt });
  ctx.placeInHot({ seq, bucket, due_at: dueAt, tenant: holder.tenant });
  deltas.move(holder.tenant, "pending", "pending", holder.bucket, bucket);
  const job = rowToJob(ctx.s.jobById.get(holder.id) as JobTuple);
  ctx.record(
    {
      tenant: job.tenant,
      id: job.id,
      kind: "replaced",
      status: "pending",
      dueAt: job.dueAt,
      attempts: job.attempts,
    },
    now,
  );
  return { job, created: false, outcome: "replaced" };
}
