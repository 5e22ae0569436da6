import type { Job, JobStatus } from "../core/job.js";
import type { PrepareItem } from "../core/schedule-input.js";
import type { BucketCount, InsertOutcome } from "../store/store.js";
import type { ClockJumpSummary } from "../engine/clock-jumps.js";
import type { LatenessSummary } from "./lateness.js";

/** A due time: epoch ms, a Date, or a text (ISO with offset, "in 10 minutes", "tomorrow 9am"). */
export type DueTime = number | Date | string;

/**
 * How far in the past a due time given to this call may be, in ms; `null` accepts any (the
 * job is overdue and runs at once). Default: the scheduler's `maxPastMs`. The one past-time
 * check of every surface: schedule, scheduleMany, reschedule and retry apply it.
 */
export interface PastTimePolicy {
  readonly maxPastMs?: number | null;
}

/** Options of `scheduleMany`. */
export interface ScheduleManyOptions extends PastTimePolicy {
  /** Maps each raw item to a ScheduleInput first; its InvalidJobError counts as the item's. */
  readonly prepare?: PrepareItem;
}

/** Options of `reschedule` and `retry`. */
export interface MoveOptions extends PastTimePolicy {
  readonly tenant?: string;
  /** Apply only if the job is still at this version. */
  readonly expectedVersion?: number;
  /** IANA zone for a wall-time or natural-language due time. Default: the `timeZone` option. */
  readonly timeZone?: string;
  /** Language of a natural-language due time ("fr"). Default English. */
  readonly locale?: string;
}

/** What `storeInfo` tells of the store, without handing it out. */
export interface StoreInfo {
  /** "sqlite" or "postgres". */
  readonly kind: string;
  readonly bucketWidthMs: number;
  readonly shardCount: number;
  /** Whether the store has a clock of its own (PostgreSQL), checked for skew. */
  readonly ownClock: boolean;
}

/** What `schedule` resolves to. */
export interface ScheduleResult {
  readonly job: Job;
  /** True only when a new job was stored (outcome `created`). */
  readonly created: boolean;
  /**
   * `created`; `existing` (the key's live job, kept); `replaced` (keyMode replace/debounce:
   * the key's pending job took the new definition); `too-late` (the key's job is claimed
   * already: nothing changed, the job comes back as it is).
   */
  readonly outcome: InsertOutcome;
}

export interface ListPage {
  readonly jobs: Job[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  readonly nextCursor: string | null;
}

export interface SchedulerStats {
  readonly counts: Record<JobStatus, number>;
  /** Pending jobs per bucket, overdue buckets included, up to `buckets` ahead of now. */
  readonly buckets: BucketCount[];
  readonly bucketWidthMs: number;
  /** Pauses (issue 13 §4): jobs held now (counted as pending too) and pauses active now. */
  readonly paused: { readonly jobs: number; readonly activePauses: number };
  /** Lateness of jobs fired by this process since it started. */
  readonly lateness: LatenessSummary;
  /** Jobs claimed by this process and not yet settled. */
  readonly inFlight: number;
  /** This process's clock: jumps noticed since it started, and its skew against the store's. */
  readonly clock: ClockStats;
}

export interface ClockStats {
  /** Wall-clock jumps noticed (wall clock against the monotonic clock) while started. */
  readonly jumps: ClockJumpSummary;
  /**
   * This node's clock minus the store's at the latest check, ms (stores with a clock of their
   * own: PostgreSQL), or null.
   */
  readonly skewMs: number | null;
}
