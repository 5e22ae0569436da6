import type { JobStatus } from "./job.js";

/**
 * Bulk operations by filter (docs/managing-jobs.md): a durable record of what to do to
 * every job matching a filter within one tenant, run in bounded batches by the operation
 * runner. Each batch is one store transaction that acts on its jobs and advances the
 * record's cursor and counts together, so after a crash the operation resumes from its
 * cursor and never acts twice on a job.
 */

/**
 * What an operation does to each job it matches:
 *  - `count`: nothing; a dry run whose `changed` says how many jobs `params.of` would change.
 *  - `cancel`: pending jobs are cancelled.
 *  - `reschedule`: pending jobs move to `params.dueAt`, or by `params.shiftMs`.
 *  - `retry`: dead jobs are pending again with a fresh attempt budget, due at `params.dueAt`
 *    (default: when the batch runs).
 *  - `erase`: jobs that are not claimed are deleted with their history and change-feed rows;
 *    nothing of them is left but the operation's counts.
 */
export type OperationKind = "count" | "cancel" | "reschedule" | "retry" | "erase";

/**
 * The states of an operation record:
 *
 *     queued --first batch--> running --last batch--> done
 *        \                       \
 *         +--cancel--> cancelled  +--cancel (after the batch in flight)--> cancelled
 *                                  \
 *                                   +--a batch that cannot run (its input)--> failed
 *
 * Infrastructure trouble (a database down) is not `failed`: the runner retries the batch.
 */
export type OperationState = "queued" | "running" | "done" | "cancelled" | "failed";

export const OPERATION_STATES: readonly OperationState[] = Object.freeze([
  "queued",
  "running",
  "done",
  "cancelled",
  "failed",
]);

/** States an operation still runs in (the runner picks them up on start). */
export const ACTIVE_OPERATION_STATES: readonly OperationState[] = Object.freeze([
  "queued",
  "running",
]);

/** Which jobs of the operation's tenant it acts on; every field given must match. */
export interface OperationFilter {
  /** Jobs carrying every one of these tags. */
  readonly tags?: readonly string[];
  /** Jobs with exactly this target (handler name or webhook URL). */
  readonly target?: string;
  /** Jobs in one of these states. */
  readonly status?: readonly JobStatus[];
  /** Due at or after (epoch ms). */
  readonly dueFrom?: number;
  /** Due before (epoch ms). */
  readonly dueTo?: number;
  /** Jobs whose idempotency key starts with this. */
  readonly keyPrefix?: string;
  /** Set (true) to act on every job of the tenant: an empty filter is refused otherwise. */
  readonly all?: boolean;
}

/**
 * The tag whose index entries a batch walks, when the filter names tags: the first one given
 * (the others are checked on each job). A batch then reads that tag's entries of the tenant
 * after the cursor (a job id) in id order, so its cost tracks the tagged jobs, not the
 * backlog; a job keeps its id and its entries through every transition, so no job is met
 * twice. Without tags a batch walks the tenant's jobs in the store's own order.
 */
export function walkedTag(f: OperationFilter): string | undefined {
  return f.tags?.[0];
}

/** What the kind needs beside the filter. */
export interface OperationParams {
  /** reschedule, retry: the new due time (epoch ms). */
  readonly dueAt?: number;
  /** reschedule: move each job by this many ms (negative: earlier). */
  readonly shiftMs?: number;
  /** count: the kind whose changes are counted (absent: every matching job counts). */
  readonly of?: Exclude<OperationKind, "count">;
}

/** An operation record, as stored and as the API answers it. */
export interface Operation {
  readonly id: string;
  readonly tenant: string;
  /**
   * The idempotency key it was started with, or null: unique among the tenant's operation
   * records, so a retried start answers this record instead of starting a second one.
   */
  readonly key: string | null;
  readonly kind: OperationKind;
  readonly filter: OperationFilter;
  readonly params: OperationParams;
  readonly state: OperationState;
  /** Jobs read so far (matching the filter or not). */
  readonly scanned: number;
  /** Jobs matching the filter that the operation changed (count: would change). */
  readonly changed: number;
  /** Jobs matching the filter left as they were (a state the kind does not act on, a series' pending occurrence). */
  readonly skipped: number;
  /** Where the next batch starts (a store position); null before the first batch. */
  readonly cursor: string | null;
  /** Why the operation failed, or null. */
  readonly error: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When the last batch ran (done, cancelled or failed), or null while it runs. */
  readonly finishedAt: number | null;
}

/** A new operation's record: queued, nothing read or changed yet; no key unless given. */
export function newOperation(
  def: Pick<Operation, "id" | "tenant" | "kind" | "filter" | "params"> & {
    readonly key?: string | null;
  },
  now: number,
): Operation {
  return {
    ...def,
    key: def.key ?? null,
    state: "queued",
    scanned: 0,
    changed: 0,
    skipped: 0,
    cursor: null,
    error: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
}

/**
 * The registry of kinds: which job states each acts on. A job matching the filter in
 * another state is `skipped`. A store implements each kind's action on one job beside its
 * single-job operations (so a bulk change is the same transition); a new kind (holding jobs
 * for a pause, say) adds its entry here and its action in each store.
 */
export interface OperationKindSpec {
  /** The job states it changes. */
  readonly acts: readonly JobStatus[];
  /** Whether it writes jobs (count does not: it may answer at once). */
  readonly writes: boolean;
}

export const OPERATION_KINDS: Readonly<Record<OperationKind, OperationKindSpec>> = Object.freeze({
  count: { acts: [], writes: false },
  cancel: { acts: ["pending"], writes: true },
  reschedule: { acts: ["pending"], writes: true },
  retry: { acts: ["dead"], writes: true },
  erase: { acts: ["pending", "succeeded", "dead", "cancelled", "expired"], writes: true },
});

export const OPERATION_KIND_NAMES = Object.freeze(
  Object.keys(OPERATION_KINDS),
) as readonly OperationKind[];

/** The job states an operation changes: its kind's, or for count those of `params.of` (all when absent). */
export function actedStatuses(op: Pick<Operation, "kind" | "params">): readonly JobStatus[] | null {
  if (op.kind !== "count") return OPERATION_KINDS[op.kind].acts;
  return op.params.of === undefined ? null : OPERATION_KINDS[op.params.of].acts;
}

/**
 * What one job of a batch is, as the store reads it: enough to match the filter and to tell
 * whether the kind acts on it.
 */
export interface OperationCandidate {
  readonly status: JobStatus;
  readonly target: string;
  readonly key: string | null;
  readonly dueAt: number;
  readonly tags: readonly string[];
  /** Its series' id when it is an occurrence of one, else null. */
  readonly scheduleId: string | null;
}

/** Whether a job matches the filter (the tenant is matched by the store's read). */
export function matchesFilter(f: OperationFilter, j: OperationCandidate): boolean {
  if (f.target !== undefined && j.target !== f.target) return false;
  if (f.status !== undefined && !f.status.includes(j.status)) return false;
  if (f.dueFrom !== undefined && j.dueAt < f.dueFrom) return false;
  if (f.dueTo !== undefined && j.dueAt >= f.dueTo) return false;
  if (f.keyPrefix !== undefined && (j.key === null || !j.key.startsWith(f.keyPrefix))) return false;
  if (f.tags !== undefined && !f.tags.every((t) => j.tags.includes(t))) return false;
  return true;
}

/**
 * What the operation does with a matching job: `act` on it, or `skip` it. A series' pending
 * occurrence is skipped by every kind: the series record names it as its next occurrence,
 * and only the series' own calls (pause, skip, delete) keep the two consistent.
 */
export function decide(
  op: Pick<Operation, "kind" | "params">,
  j: OperationCandidate,
): "act" | "skip" {
  if (j.scheduleId !== null && j.status === "pending") return "skip";
  const acts = actedStatuses(op);
  if (acts === null) return "act";
  return acts.includes(j.status) ? "act" : "skip";
}

/** The new due time a reschedule or retry gives a job due at `dueAt`, at `now`. */
export function operationDueAt(params: OperationParams, dueAt: number, now: number): number {
  if (params.shiftMs !== undefined) return dueAt + params.shiftMs;
  return params.dueAt ?? now;
}

/** A batch's result: the record after it and how many jobs it read. */
export interface OperationStepResult {
  readonly operation: Operation;
  /** Jobs this batch read (0: nothing left, or the operation is no longer active). */
  readonly scanned: number;
}
