import { shardOf } from "../../core/ids.js";
import { newPendingJob, replacementDueAt, type Job, type NewJob } from "../../core/job.js";
import type { InsertResult } from "../../store/store.js";
import { tagsColumn } from "../../core/tags.js";
import { callbacksColumn } from "../../core/callbacks.js";
import type { SqliteContext } from "./context.js";
import { tagsAdd, tagsReplace } from "./tags.js";
import { pauseCovering, type Pause } from "../../core/pause.js";
import { INSERT_BATCH_ROWS, jobInsertRows } from "./insert-statements.js";
import { activePauses, holdJobs } from "./held.js";
import { CounterDeltas, rowSeq, rowToJob, type JobTuple } from "./rows.js";

/**
 * Stores jobs; call inside a write transaction (which makes each key's check and change one
 * step). A key held by a live job answers by the job's keyMode (see Store.jobsInsert); a key
 * held by an earlier job of the same call returns that job; a key whose holder has finished
 * passes to the new job. Each job is placed here, in the bucket of its due time and the shard of its
 * id; jobs whose bucket is staged (or being staged) go straight into the hot index too. A
 * job an active pause covers is stored held (pauses.ts): out of the hot index. The new rows
 * are written together once every key is answered (writeRows), then what needs their seqs.
 */
export function insertJobs(
  ctx: SqliteContext,
  jobs: readonly NewJob[],
  now: number,
): InsertResult[] {
  const deltas = new CounterDeltas();
  const byKey = new Map<string, Job>();
  const results: InsertResult[] = [];
  const pauses = activePauses(ctx);
  const fresh: FreshRow[] = [];
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
    const pause = pauses.length > 0 ? pauseCovering(pauses, j) : undefined;
    fresh.push({ j, bucket, shard, pause });
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
    if (j.key !== null) byKey.set(`${j.tenant}\u0000${j.key}`, job);
    results.push({ job, created: true, outcome: "created" });
  }
  placeRows(ctx, fresh, writeRows(ctx, fresh, now), now);
  ctx.flush(deltas);
  return results;
}

/** A new job's row as insertJobs writes it: its bucket, shard and covering pause. */
interface FreshRow {
  readonly j: NewJob;
  readonly bucket: number;
  readonly shard: number;
  readonly pause: Pause | undefined;
}

/**
 * Inserts the rows, up to INSERT_BATCH_ROWS to a statement (jobInsertRows); returns their
 * seqs in order.
 */
function writeRows(ctx: SqliteContext, rows: readonly FreshRow[], now: number): number[] {
  const seqs: number[] = [];
  for (let i = 0; i < rows.length; i += INSERT_BATCH_ROWS) {
    const n = Math.min(INSERT_BATCH_ROWS, rows.length - i);
    const params: unknown[] = [];
    for (let k = i; k < i + n; k++) pushRowParams(params, rows[k]!, now);
    const statement = n === 1 ? ctx.s.jobInsert : jobInsertRows(ctx.db, n);
    const last = Number(statement.run(...params).lastInsertRowid);
    for (let k = n - 1; k >= 0; k--) seqs.push(last - k);
  }
  return seqs;
}

/** One row's 19 values, in the insert statements' column order (insert-statements.ts). */
function pushRowParams(params: unknown[], r: FreshRow, now: number): void {
  const j = r.j;
  params.push(
    j.id,
    j.tenant,
    j.key,
    j.dueAt,
    r.bucket,
    r.shard,
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
}

/**
 * What needs a new row's seq: its tag entries and live key, its hot index entry when its
 * bucket is staged, or its hold when a pause covers it.
 */
function placeRows(
  ctx: SqliteContext,
  rows: readonly FreshRow[],
  seqs: readonly number[],
  now: number,
): void {
  const staged = new Map<number, boolean>();
  const toHold = new Map<
    string,
    { seq: number; id: string; tenant: string; dueAt: number; attempts: number }[]
  >();
  for (let i = 0; i < rows.length; i++) {
    const { j, bucket, pause } = rows[i]!;
    const seq = seqs[i]!;
    tagsAdd(ctx.s, j, seq, bucket);
    if (j.key !== null) ctx.s.liveKeySet.run(j.tenant, j.key, seq);
    if (pause) {
      const held = { seq, id: j.id, tenant: j.tenant, dueAt: j.dueAt, attempts: 0 };
      toHold.set(pause.id, [...(toHold.get(pause.id) ?? []), held]);
      continue;
    }
    let isStaged = staged.get(bucket);
    if (isStaged === undefined) {
      isStaged = ctx.isStaged(bucket);
      staged.set(bucket, isStaged);
    }
    if (isStaged) ctx.s.hotInsert.run(j.dueAt, seq, j.tenant);
  }
  holdJobs(ctx, toHold, now);
}

/**
 * The live holder of a key met by a new job: kept (`keep`), too late (claimed), or replaced
 * in place: its row takes the new definition (tags included: tagsReplace) and moves between buckets and the hot index as
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
  tagsReplace(ctx.s, holder, j.tags, seq, bucket);
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
