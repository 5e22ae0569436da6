import type { Job, JobStatus, JsonValue } from "../../core/job.js";

/** A jobs row as better-sqlite3 returns it. */
export interface JobRow {
  seq: number;
  id: string;
  tenant: string;
  key: string | null;
  status: JobStatus;
  due_at: number;
  bucket: number;
  shard: number;
  payload: string;
  target: string;
  target_options: string | null;
  attempts: number;
  max_attempts: number;
  expire_after_ms: number | null;
  version: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  fence: number;
  last_error: string | null;
  last_result: string | null;
  created_at: number;
  updated_at: number;
  fired_at: number | null;
  finished_at: number | null;
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
  };
}

/**
 * Counter changes gathered during one transaction and written once at its end: a bulk
 * insert of 10,000 jobs touches one counter row per (bucket, tenant), not one per job.
 */
export class CounterDeltas {
  readonly buckets = new Map<string, { bucket: number; tenant: string; delta: number }>();
  readonly statuses = new Map<string, { tenant: string; status: JobStatus; delta: number }>();

  pending(bucket: number, tenant: string, delta: number): void {
    const k = `${bucket}|${tenant}`;
    const e = this.buckets.get(k);
    if (e) e.delta += delta;
    else this.buckets.set(k, { bucket, tenant, delta });
  }

  status(tenant: string, status: JobStatus, delta: number): void {
    const k = `${tenant}|${status}`;
    const e = this.statuses.get(k);
    if (e) e.delta += delta;
    else this.statuses.set(k, { tenant, status, delta });
  }

  /** A job moved from one state to another (bucket counters follow `pending`). */
  move(tenant: string, from: JobStatus, to: JobStatus, fromBucket: number, toBucket: number): void {
    this.status(tenant, from, -1);
    this.status(tenant, to, 1);
    if (from === "pending") this.pending(fromBucket, tenant, -1);
    if (to === "pending") this.pending(toBucket, tenant, 1);
  }
}
