import { bucketOf } from "../../core/buckets.js";
import { shardOf } from "../../core/ids.js";
import type { Job, JobStatus, JsonValue, NewJob } from "../../core/job.js";
import { tagsColumn, tagsFromColumn } from "../../core/tags.js";
import { callbacksColumn, callbacksFromColumn } from "../../core/callbacks.js";

/** A job row as node-postgres returns it (bigint parsed to number by the pool's types). */
export interface JobRow {
  shard: number;
  id: string;
  tenant: string;
  key: string | null;
  status: JobStatus;
  due_at: number;
  bucket: number;
  payload: string;
  target: string;
  target_options: string | null;
  trace_context: string | null;
  attempts: number;
  max_attempts: number;
  expire_after_ms: number | null;
  version: number;
  fence: number;
  last_error: string | null;
  last_result: string | null;
  created_at: number;
  updated_at: number;
  fired_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  finished_at: number | null;
  schedule_id: string | null;
  nominal: string | null;
  tags: string | null;
  callbacks: string | null;
  callback_of: string | null;
  /** The pause holding it (a row of jobs_held); absent or null otherwise. */
  paused_by?: string | null;
}

export function rowToJob(r: JobRow): Job {
  return {
    id: r.id,
    tenant: r.tenant,
    key: r.key,
    status: r.status,
    dueAt: r.due_at,
    bucket: r.bucket,
    shard: r.shard,
    payload: JSON.parse(r.payload) as JsonValue,
    target: r.target,
    targetOptions:
      r.target_options === null ? null : (JSON.parse(r.target_options) as Record<string, unknown>),
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    expireAfterMs: r.expire_after_ms,
    version: r.version,
    leaseOwner: r.lease_owner,
    leaseExpiresAt: r.lease_expires_at,
    fence: r.fence,
    lastError: r.last_error,
    lastResult: r.last_result === null ? null : (JSON.parse(r.last_result) as JsonValue),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    firedAt: r.fired_at,
    finishedAt: r.finished_at,
    traceContext: r.trace_context,
    scheduleId: r.schedule_id,
    nominal: r.nominal,
    tags: tagsFromColumn(r.tags),
    pausedBy: r.paused_by ?? null,
    callbacks: callbacksFromColumn(r.callbacks),
    callbackOf: r.callback_of,
  };
}

/**
 * Where each job of a batch lives, by index: its bucket (partition) and shard, computed by
 * the store from its own width and shard count, never taken from the caller.
 */
export interface Placements {
  readonly bucket: readonly number[];
  readonly shard: readonly number[];
}

export function placeJobs(
  jobs: readonly NewJob[],
  bucketWidthMs: number,
  shardCount: number,
): Placements {
  const n = jobs.length;
  const bucket = new Array<number>(n);
  const shard = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const j = jobs[i]!;
    bucket[i] = bucketOf(j.dueAt, bucketWidthMs);
    shard[i] = shardOf(j.id, shardCount);
  }
  return { bucket, shard };
}

/**
 * Column arrays for the unnest insert of the jobs at `indexes` (all when omitted), in the
 * order of statements.liveInsert.
 */
export function insertArrays(
  jobs: readonly NewJob[],
  place: Placements,
  now: number,
  indexes?: readonly number[],
): unknown[] {
  const n = indexes === undefined ? jobs.length : indexes.length;
  const shard = new Array<number>(n);
  const id = new Array<string>(n);
  const tenant = new Array<string>(n);
  const key = new Array<string | null>(n);
  const due = new Array<number>(n);
  const bucket = new Array<number>(n);
  const payload = new Array<string>(n);
  const target = new Array<string>(n);
  const targetOptions = new Array<string | null>(n);
  const traceContext = new Array<string | null>(n);
  const maxAttempts = new Array<number>(n);
  const expireAfter = new Array<number | null>(n);
  const scheduleId = new Array<string | null>(n);
  const nominal = new Array<string | null>(n);
  const tags = new Array<string | null>(n);
  const callbacks = new Array<string | null>(n);
  const callbackOf = new Array<string | null>(n);
  for (let i = 0; i < n; i++) {
    const at = indexes === undefined ? i : indexes[i]!;
    const j = jobs[at]!;
    shard[i] = place.shard[at]!;
    id[i] = j.id;
    tenant[i] = j.tenant;
    key[i] = j.key;
    due[i] = j.dueAt;
    bucket[i] = place.bucket[at]!;
    payload[i] = j.payloadJson ?? JSON.stringify(j.payload);
    target[i] = j.target;
    targetOptions[i] = j.targetOptions === null ? null : JSON.stringify(j.targetOptions);
    traceContext[i] = j.traceContext ?? null;
    maxAttempts[i] = j.maxAttempts;
    expireAfter[i] = j.expireAfterMs;
    scheduleId[i] = j.scheduleId ?? null;
    nominal[i] = j.nominal ?? null;
    tags[i] = tagsColumn(j.tags);
    callbacks[i] = callbacksColumn(j.callbacks);
    callbackOf[i] = j.callbackOf ?? null;
  }
  return [
    shard,
    id,
    tenant,
    key,
    due,
    bucket,
    payload,
    target,
    targetOptions,
    traceContext,
    maxAttempts,
    expireAfter,
    now,
    scheduleId,
    nominal,
    tags,
    callbacks,
    callbackOf,
  ];
}

export function byDue(a: Job, b: Job): number {
  return a.dueAt - b.dueAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
