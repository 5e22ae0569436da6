/**
 * The job and its state machine.
 *
 * ```
 *             schedule
 *                |
 *                v          cancel
 *   +------> pending ----------------> cancelled
 *   |         |  ^  \
 *   |   claim |  |   \ reschedule (stays pending, new due time)
 *   |         v  |
 *   |      claimed --- lease expired / handler threw, attempts left ---> pending
 *   |       |  |  \--- unstarted at stop / holder died and restarted ---> pending (attempt given back)
 *   |       |  |  \
 *   |  ok   |  |   \ too late (now - dueAt > expireAfterMs)
 *   |       v  |    v
 *   |  succeeded|   expired
 *   |           v
 *   +-------- dead   (threw with no attempts left; `retry` puts it back to pending)
 * ```
 *
 * Live states (`pending`, `claimed`) are in the due-time index; the others are history and
 * leave the index in the same statement that sets them. Every transition is a conditional
 * update naming the state it expects, so a late or duplicate writer changes nothing.
 */
export type JobStatus = "pending" | "claimed" | "succeeded" | "dead" | "cancelled" | "expired";

export const JOB_STATUSES: readonly JobStatus[] = Object.freeze([
  "pending",
  "claimed",
  "succeeded",
  "dead",
  "cancelled",
  "expired",
]);

/** States that are in the due-time index and may still fire. */
export const LIVE_STATUSES: readonly JobStatus[] = Object.freeze(["pending", "claimed"]);

/** States a job never leaves (except `dead`, which an operator may retry). */
export const FINISHED_STATUSES: readonly JobStatus[] = Object.freeze([
  "succeeded",
  "dead",
  "cancelled",
  "expired",
]);

/** JSON-serialisable value, the payload of a job. */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A stored job, as every store returns it. Times are UTC epoch milliseconds. */
export interface Job {
  /** Time-sortable id (ULID, 26 chars): sorts by creation time. */
  readonly id: string;
  readonly tenant: string;
  /** Idempotency key, unique per tenant among live jobs; null when none was given. */
  readonly key: string | null;
  readonly status: JobStatus;
  /** When the job should fire (epoch ms). */
  readonly dueAt: number;
  /** Start of the time bucket holding `dueAt` (epoch ms), computed at write time. */
  readonly bucket: number;
  /** Shard of the job, a hash of its id modulo the shard count. */
  readonly shard: number;
  readonly payload: JsonValue;
  /** Where it fires: a handler name (library) or a webhook URL (service). */
  readonly target: string;
  /** Target-specific options (webhook headers), or null. */
  readonly targetOptions: Readonly<Record<string, unknown>> | null;
  readonly attempts: number;
  readonly maxAttempts: number;
  /** Misfire tolerance in ms: a job claimed later than this past its due time expires. Null: fire anyway. */
  readonly expireAfterMs: number | null;
  /** Bumped on every change, for optimistic concurrency (reschedule's expected version). */
  readonly version: number;
  readonly leaseOwner: string | null;
  readonly leaseExpiresAt: number | null;
  /** Fencing token: bumped on every claim; an acknowledgement carrying an older one changes nothing. */
  readonly fence: number;
  readonly lastError: string | null;
  readonly lastResult: JsonValue | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When the last attempt started firing, or null. */
  readonly firedAt: number | null;
  /** When the job reached a finished state, or null. */
  readonly finishedAt: number | null;
}

/** A validated job ready to be stored (what the engine hands to `jobsInsert`). */
export interface NewJob {
  readonly id: string;
  readonly tenant: string;
  readonly key: string | null;
  readonly dueAt: number;
  readonly bucket: number;
  readonly shard: number;
  readonly payload: JsonValue;
  /** `payload` as JSON text when the validator already has it (saves the store a stringify). */
  readonly payloadJson?: string;
  readonly target: string;
  readonly targetOptions: Readonly<Record<string, unknown>> | null;
  readonly maxAttempts: number;
  readonly expireAfterMs: number | null;
}

/**
 * The job a fresh insert stores, built without reading it back. A literal on purpose: on the
 * bulk path, spreading `j` into a 24-key object was measured slower than the insert itself.
 */
export function newPendingJob(j: NewJob, now: number): Job {
  return {
    id: j.id,
    tenant: j.tenant,
    key: j.key,
    status: "pending",
    dueAt: j.dueAt,
    bucket: j.bucket,
    shard: j.shard,
    payload: j.payload,
    target: j.target,
    targetOptions: j.targetOptions,
    attempts: 0,
    maxAttempts: j.maxAttempts,
    expireAfterMs: j.expireAfterMs,
    version: 1,
    leaseOwner: null,
    leaseExpiresAt: null,
    fence: 0,
    lastError: null,
    lastResult: null,
    createdAt: now,
    updatedAt: now,
    firedAt: null,
    finishedAt: null,
  };
}
