import type { Job, JobStatus, JsonValue } from "../../core/job.js";
import { tagsFromColumn } from "../../core/tags.js";
import { callbacksFromColumn } from "../../core/callbacks.js";

/**
 * Columns every job-returning statement selects, in this order. Those statements run in
 * better-sqlite3's raw mode (arrays, not objects): building a 24-key object per row cost
 * more than the claim's own update (measured 12 vs 4.6 us a job).
 */
export const JOB_COLUMN_NAMES = [
  "seq",
  "id",
  "tenant",
  "key",
  "status",
  "due_at",
  "bucket",
  "shard",
  "payload",
  "target",
  "target_options",
  "attempts",
  "max_attempts",
  "expire_after_ms",
  "version",
  "lease_owner",
  "lease_expires_at",
  "fence",
  "last_error",
  "last_result",
  "created_at",
  "updated_at",
  "fired_at",
  "finished_at",
  "trace_context",
  "schedule_id",
  "nominal",
  "tags",
  "paused_by",
  "callbacks",
  "callback_of",
] as const;

/** A jobs row in raw mode: values in JOB_COLUMN_NAMES order. */
export type JobTuple = unknown[];

/** A decoded row: the job and its rowid. */
export interface StoredJob {
  readonly seq: number;
  readonly job: Job;
}

/**
 * What the transitions shared by single-job calls and bulk batches (changes.ts, held.ts,
 * operations.ts) read of a job: its state and identity, not its definition (payload, target
 * options, callbacks), so a batch can read and decode far less than a whole row (bulk.ts).
 */
export type JobState = Pick<
  Job,
  | "id"
  | "tenant"
  | "key"
  | "status"
  | "dueAt"
  | "bucket"
  | "target"
  | "attempts"
  | "fence"
  | "version"
  | "lastError"
  | "firedAt"
  | "scheduleId"
  | "tags"
  | "pausedBy"
>;

/** A job's state and its rowid (a StoredJob is one). */
export interface StoredState {
  readonly seq: number;
  readonly job: JobState;
}

/**
 * Columns a bulk batch selects (job-sql.ts JOB_STATE_COLUMNS), in this order: a JobState and
 * the seq. Its rows skip the payload and the other JSON columns a batch never uses (decoding
 * a whole row was the larger part of a batch's read).
 */
export const JOB_STATE_COLUMN_NAMES = [
  "seq",
  "id",
  "tenant",
  "key",
  "status",
  "due_at",
  "bucket",
  "target",
  "attempts",
  "fence",
  "version",
  "last_error",
  "fired_at",
  "schedule_id",
  "tags",
  "paused_by",
] as const;

/** A row of JOB_STATE_COLUMN_NAMES (raw mode). */
export function rowToState(r: JobTuple): StoredState {
  return {
    seq: r[0] as number,
    job: {
      id: r[1] as string,
      tenant: r[2] as string,
      key: r[3] as string | null,
      status: r[4] as JobStatus,
      dueAt: r[5] as number,
      bucket: r[6] as number,
      target: r[7] as string,
      attempts: r[8] as number,
      fence: r[9] as number,
      version: r[10] as number,
      lastError: r[11] as string | null,
      firedAt: r[12] as number | null,
      scheduleId: r[13] as string | null,
      tags: tagsFromColumn(r[14] as string | null),
      pausedBy: r[15] as string | null,
    },
  };
}

/** Position of each column in a JobTuple. */
const COL = Object.fromEntries(JOB_COLUMN_NAMES.map((name, i) => [name, i])) as Record<
  (typeof JOB_COLUMN_NAMES)[number],
  number
>;

export function rowSeq(r: JobTuple): number {
  return r[COL.seq] as number;
}

/**
 * A pending row as the claim just made it (the values `claimInsert` wrote): claimed, with
 * the lease, and the next fencing token, attempt and version. Changes the tuple in place.
 */
export function asClaimed(
  r: JobTuple,
  lease: { owner: string; leaseUntil: number; now: number },
): JobTuple {
  r[COL.status] = "claimed";
  r[COL.attempts] = (r[COL.attempts] as number) + 1;
  r[COL.fence] = (r[COL.fence] as number) + 1;
  r[COL.version] = (r[COL.version] as number) + 1;
  r[COL.lease_owner] = lease.owner;
  r[COL.lease_expires_at] = lease.leaseUntil;
  r[COL.updated_at] = lease.now;
  return r;
}

/** What deciding whether a pause covers a pending row needs (pauses.ts). */
export function rowPauseFields(r: JobTuple): {
  seq: number;
  id: string;
  tenant: string;
  target: string;
  dueAt: number;
  attempts: number;
  tags: readonly string[];
} {
  return {
    seq: r[COL.seq] as number,
    id: r[COL.id] as string,
    tenant: r[COL.tenant] as string,
    target: r[COL.target] as string,
    dueAt: r[COL.due_at] as number,
    attempts: r[COL.attempts] as number,
    tags: tagsFromColumn(r[COL.tags] as string | null),
  };
}

export function decodeRow(r: JobTuple): StoredJob {
  return { seq: r[0] as number, job: rowToJob(r) };
}

export function rowToJob(r: JobTuple): Job {
  return {
    id: r[1] as string,
    tenant: r[2] as string,
    key: r[3] as string | null,
    status: r[4] as JobStatus,
    dueAt: r[5] as number,
    bucket: r[6] as number,
    shard: r[7] as number,
    payload: JSON.parse(r[8] as string) as JsonValue,
    target: r[9] as string,
    targetOptions: r[10] === null ? null : (JSON.parse(r[10] as string) as Record<string, unknown>),
    attempts: r[11] as number,
    maxAttempts: r[12] as number,
    expireAfterMs: r[13] as number | null,
    version: r[14] as number,
    leaseOwner: r[15] as string | null,
    leaseExpiresAt: r[16] as number | null,
    fence: r[17] as number,
    lastError: r[18] as string | null,
    lastResult: r[19] === null ? null : (JSON.parse(r[19] as string) as JsonValue),
    createdAt: r[20] as number,
    updatedAt: r[21] as number,
    firedAt: r[22] as number | null,
    finishedAt: r[23] as number | null,
    traceContext: r[24] as string | null,
    scheduleId: r[25] as string | null,
    nominal: r[26] as string | null,
    tags: tagsFromColumn(r[27] as string | null),
    pausedBy: (r[28] as string | null | undefined) ?? null,
    callbacks: callbacksFromColumn(r[29] as string | null),
    callbackOf: r[30] as string | null,
  };
}

/**
 * Counter changes gathered during one transaction and written once at its end: a bulk
 * insert of 10,000 jobs touches one counter row per (bucket, tenant), not one per job.
 */
export class CounterDeltas {
  /** tenant -> bucket -> pending delta; tenant -> status -> delta. Nested maps, no key strings. */
  private readonly byTenant = new Map<
    string,
    { buckets: Map<number, number>; statuses: Map<JobStatus, number> }
  >();

  private tenant(tenant: string) {
    let t = this.byTenant.get(tenant);
    if (!t) {
      t = { buckets: new Map(), statuses: new Map() };
      this.byTenant.set(tenant, t);
    }
    return t;
  }

  pending(bucket: number, tenant: string, delta: number): void {
    const m = this.tenant(tenant).buckets;
    m.set(bucket, (m.get(bucket) ?? 0) + delta);
  }

  status(tenant: string, status: JobStatus, delta: number): void {
    const m = this.tenant(tenant).statuses;
    m.set(status, (m.get(status) ?? 0) + delta);
  }

  /** A job moved from one state to another (bucket counters follow `pending`). */
  move(tenant: string, from: JobStatus, to: JobStatus, fromBucket: number, toBucket: number): void {
    this.status(tenant, from, -1);
    this.status(tenant, to, 1);
    if (from === "pending") this.pending(fromBucket, tenant, -1);
    if (to === "pending") this.pending(toBucket, tenant, 1);
  }

  /** Every non-zero bucket delta. */
  *bucketDeltas(): Generator<{ bucket: number; tenant: string; delta: number }> {
    for (const [tenant, t] of this.byTenant) {
      for (const [bucket, delta] of t.buckets) if (delta !== 0) yield { bucket, tenant, delta };
    }
  }

  /** Every non-zero status delta. */
  *statusDeltas(): Generator<{ tenant: string; status: JobStatus; delta: number }> {
    for (const [tenant, t] of this.byTenant) {
      for (const [status, delta] of t.statuses) if (delta !== 0) yield { tenant, status, delta };
    }
  }
}
