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
 * Live states are `pending` and `claimed`; only `pending` jobs are in the due-time index (a
 * claim takes the job out of it in the statement that leases it); the finished states are
 * history. Every transition is a conditional update naming the state it expects, so a late
 * or duplicate writer changes nothing. JOB_STATES and JOB_TRANSITIONS below say the same as
 * data: the tables of docs/state-machine.md are generated from them, and a test fails when
 * the page drifts (`npm run docs:states` rewrites them).
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

/** What a state means, as docs/state-machine.md shows it. */
export interface JobStateInfo {
  /** Not finished: the job may still fire (its idempotency key is taken). */
  readonly live: boolean;
  /** In the due-time index the claim reads (SQLite: once the job's bucket is staged). */
  readonly inDueTimeIndex: boolean;
  readonly meaning: string;
}

export const JOB_STATES: Readonly<Record<JobStatus, JobStateInfo>> = Object.freeze({
  pending: { live: true, inDueTimeIndex: true, meaning: "waiting for its due time" },
  claimed: {
    live: true,
    inDueTimeIndex: false,
    meaning:
      "leased to one process (`leaseOwner`, `leaseExpiresAt`, `fence` set); the claim took it out of the index",
  },
  succeeded: {
    live: false,
    inDueTimeIndex: false,
    meaning: "the handler returned; `lastResult` holds what it returned",
  },
  dead: {
    live: false,
    inDueTimeIndex: false,
    meaning:
      "attempts exhausted, a `PermanentJobError`, or no handler; `lastError` holds the last error",
  },
  cancelled: { live: false, inDueTimeIndex: false, meaning: "cancelled while pending" },
  expired: {
    live: false,
    inDueTimeIndex: false,
    meaning: "claimed more than `expireAfterMs` after its due time: recorded, not fired",
  },
});

/** One arrow of the state machine. `from` null: the job is created. */
export interface JobTransition {
  readonly from: JobStatus | null;
  readonly to: JobStatus;
  /** What makes it happen. */
  readonly when: string;
  /** What else changes (beyond `version + 1`, which every change does). */
  readonly effect: string;
}

export const JOB_TRANSITIONS: readonly JobTransition[] = Object.freeze([
  { from: null, to: "pending", when: "`schedule`", effect: "bucket and shard computed once" },
  { from: "pending", to: "pending", when: "`reschedule`", effect: "new due time (and bucket)" },
  {
    from: "pending",
    to: "cancelled",
    when: "`cancel`",
    effect: "leaves the index; its key is free",
  },
  {
    from: "pending",
    to: "claimed",
    when: "due, claimed by a process that owns its shard",
    effect: "lease set, `fence + 1`, `attempts + 1`",
  },
  { from: "claimed", to: "succeeded", when: "the handler returned", effect: "`lastResult` kept" },
  {
    from: "claimed",
    to: "pending",
    when: "the handler threw, attempts left",
    effect: "due = now + backoff, `lastError` kept",
  },
  {
    from: "claimed",
    to: "pending",
    when: "its lease ran out, attempts left",
    effect: "same due time",
  },
  {
    from: "claimed",
    to: "pending",
    when: "`stop()` before its handler started",
    effect: "same due time, attempt given back",
  },
  {
    from: "claimed",
    to: "pending",
    when: "the handler threw an `InfrastructureError` (a database was down)",
    effect: "due = now + backoff, attempt given back",
  },
  {
    from: "claimed",
    to: "pending",
    when: "its holder died and restarted under the same `nodeName`",
    effect: "same due time, attempt given back",
  },
  {
    from: "claimed",
    to: "expired",
    when: "claimed more than `expireAfterMs` after its due time",
    effect: "handler not called, lateness in `lastError`",
  },
  {
    from: "claimed",
    to: "dead",
    when: "the handler threw (or its lease ran out) with no attempts left, a `PermanentJobError`, no handler",
    effect: "`lastError` kept",
  },
  {
    from: "dead",
    to: "pending",
    when: "`retry`",
    effect: "a fresh attempt budget; refused while another live job holds its key",
  },
] satisfies JobTransition[]);

/** States that may still fire (not finished); of these only `pending` is in the due-time index. */
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
  /**
   * The trace context active when it was scheduled, as a W3C `traceparent` (55 bytes), or
   * null: stored only while an OpenTelemetry SDK records (docs/tracing.md). Each attempt's
   * span links to it.
   */
  readonly traceContext: string | null;
  /** The recurring series this job is an occurrence of (src/core/series.ts), or null. */
  readonly scheduleId: string | null;
  /**
   * The occurrence's nominal time as the series' rule names it, or null for a one-shot job:
   * its wall time in the series' zone, ISO without offset ("2026-03-29T02:30:00"), with "#2"
   * for the second instant of a wall time the clocks show twice. Unique per series: with
   * `scheduleId`, the occurrence's key.
   */
  readonly nominal: string | null;
  /**
   * Labels the job is found and acted on by (src/core/tags.ts): at most 16, each 1 to 64
   * printable characters without spaces, in the order given; empty when none.
   */
  readonly tags: readonly string[];
  /**
   * The pause holding this pending job (src/core/pause.ts), or null. A held job is not in the
   * due-time index: it is never claimed until its pause is resumed.
   */
  readonly pausedBy: string | null;
  /** Outcome callback URLs (src/core/callbacks.ts), or null when none were given. */
  readonly callbacks: JobCallbacks | null;
  /** For a callback job: the id of the job whose outcome it reports; else null. */
  readonly callbackOf: string | null;
}

/**
 * Webhook URLs a job calls when an attempt settles with that outcome (src/core/callbacks.ts
 * says when each is called and what it carries).
 */
export interface JobCallbacks {
  readonly onSuccess?: string;
  readonly onFailure?: string;
  readonly onDead?: string;
}

/**
 * A validated job ready to be stored (what the engine hands to `jobsInsert`). Where it lives
 * (its bucket and shard) is the store's business: the store computes both from `dueAt` and
 * `id` with its own width and shard count (bucketOf, shardOf).
 */
export interface NewJob {
  readonly id: string;
  readonly tenant: string;
  readonly key: string | null;
  readonly dueAt: number;
  readonly payload: JsonValue;
  /** `payload` as JSON text when the validator already has it (saves the store a stringify). */
  readonly payloadJson?: string;
  readonly target: string;
  readonly targetOptions: Readonly<Record<string, unknown>> | null;
  readonly maxAttempts: number;
  readonly expireAfterMs: number | null;
  /** The scheduling span's W3C `traceparent` (set by the Scheduler, see Job); absent: null. */
  readonly traceContext?: string | null;
  /** The series this job is an occurrence of; absent or null for a one-shot job. */
  readonly scheduleId?: string | null;
  /** The occurrence's nominal time (with `scheduleId`), as Job.nominal. */
  readonly nominal?: string | null;
  /**
   * What a live job already holding `key` does with this one (see KeyMode). Default `keep`.
   */
  readonly keyMode?: KeyMode;
  /**
   * `debounce` only: the latest due time, in ms after the first call (the holder's
   * `createdAt`), however often the job is pushed back. Null or absent: no bound.
   */
  readonly maxWaitMs?: number | null;
  /** Its tags (checked by optionalTags); absent or empty: none. */
  readonly tags?: readonly string[];
  /** Its outcome callbacks (checked by optionalCallbacks); absent or null: none. */
  readonly callbacks?: JobCallbacks | null;
  /** A callback job: the job it reports on (set by callbackJob only). */
  readonly callbackOf?: string | null;
}

/**
 * What scheduling a key that a live job holds does:
 *  - `keep`: nothing; the live job comes back (plain idempotency).
 *  - `replace`: the pending holder takes the new due time, payload, target, options and
 *    tags (same id, version + 1); a claimed holder cannot be replaced (`too-late`).
 *  - `debounce`: as `replace`, with the due time bounded by `maxWaitMs` after the holder was
 *    first scheduled, so a stream of calls fires at most that long after the first.
 */
/** The tags of a job that has none (shared, frozen). */
export const NO_TAGS: readonly string[] = Object.freeze([]);

export type KeyMode = "keep" | "replace" | "debounce";

export const KEY_MODES: readonly KeyMode[] = Object.freeze(["keep", "replace", "debounce"]);

/**
 * The due time a replacing schedule gives the live `holder` of its key: the new job's, or
 * for `debounce` at most `maxWaitMs` after the holder's first schedule. Both stores use it.
 */
export function replacementDueAt(holder: Job, j: NewJob): number {
  if (j.keyMode !== "debounce" || j.maxWaitMs === undefined || j.maxWaitMs === null) {
    return j.dueAt;
  }
  return Math.min(j.dueAt, holder.createdAt + j.maxWaitMs);
}

/**
 * The job a fresh insert stores, built without reading it back, in the `bucket` and `shard`
 * the store placed it. A literal on purpose: on the bulk path, spreading `j` into a 24-key
 * object was measured slower than the insert itself.
 */
export function newPendingJob(j: NewJob, bucket: number, shard: number, now: number): Job {
  return {
    id: j.id,
    tenant: j.tenant,
    key: j.key,
    status: "pending",
    dueAt: j.dueAt,
    bucket,
    shard,
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
    traceContext: j.traceContext ?? null,
    scheduleId: j.scheduleId ?? null,
    nominal: j.nominal ?? null,
    tags: j.tags ?? NO_TAGS,
    pausedBy: null,
    callbacks: j.callbacks ?? null,
    callbackOf: j.callbackOf ?? null,
  };
}
