import type { Job, JobStatus } from "../core/job.js";
import type { ClockJump } from "../engine/clock-jumps.js";

/** One change to a job, as the `changed` event reports it (a feed for live views). */
export interface JobChange {
  readonly kind:
    | "scheduled"
    | "replaced"
    | "cancelled"
    | "rescheduled"
    | "retried"
    | "succeeded"
    | "failed"
    | "deferred"
    | "dead"
    | "expired";
  readonly id: string;
  readonly tenant: string;
  /** The job's state after the change. */
  readonly status: JobStatus;
  /** Its due time after the change (the retry time for `failed` and `deferred`). */
  readonly dueAt: number;
  /** When the change was recorded (epoch ms). */
  readonly at: number;
}

export interface SchedulerEvents {
  /** The handler returned (or its promise resolved): the job is finished, its result kept. */
  succeeded: [{ job: Job; latenessMs: number; result: unknown }];
  /**
   * @deprecated Use `succeeded`: the same event under its old name, emitted right after it
   * with the same argument; removed in the release after next. (`failed` is an attempt that
   * fired too, so "fired" never meant only success.)
   */
  fired: [{ job: Job; latenessMs: number; result: unknown }];
  failed: [{ job: Job; latenessMs: number; error: string; retryAt: number }];
  /**
   * The handler could not attempt the job (InfrastructureError: a database or secret store
   * was down): pending again at `retryAt`, its attempt not spent.
   */
  deferred: [{ job: Job; latenessMs: number; error: string; retryAt: number }];
  dead: [{ job: Job; latenessMs: number; error: string }];
  expired: [{ job: Job; latenessMs: number }];
  /** Every change this process made to a job, after it is stored. */
  changed: [JobChange];
  /** The wall clock stepped against the monotonic clock while started (see docs/clocks.md). */
  clockJump: [ClockJump];
}
