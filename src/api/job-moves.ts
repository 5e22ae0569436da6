import type { Clock } from "../core/clock.js";
import { InvalidJobError } from "../core/errors.js";
import type { Job } from "../core/job.js";
import { dueTimeFieldsOf, resolveDueTime, type DueTimeFields } from "../core/due-time.js";
import { requireInteger } from "../core/validate.js";
import type { RescheduleResult, Store } from "../store/store.js";
import type { JobChange } from "./scheduler-events.js";
import type { DueTime, MoveOptions, PastTimePolicy } from "./scheduler-types.js";

/** The Scheduler's methods that move a job to a new due time. */
export interface MoveMethods {
  /**
   * Moves a pending job to a new due time (snooze): `dueAt` as schedule reads it, or the
   * fields `{ dueAt, timeZone }` / `{ delayMs }`. With `expectedVersion` it applies only if
   * nobody changed the job since. Outcomes: rescheduled, too-late, version-conflict, not-found.
   */
  reschedule(
    id: string,
    dueAt: DueTime | DueTimeFields,
    opts?: MoveOptions,
  ): Promise<RescheduleResult>;

  /**
   * Puts a dead job back to pending with fresh attempts, due at `dueAt` (or `delayMs` from
   * now; default now).
   */
  retry(
    id: string,
    opts?: MoveOptions & { dueAt?: DueTime; delayMs?: number },
  ): Promise<RescheduleResult>;
}

/** What a move needs of the Scheduler. */
export interface JobMovesDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly defaultTimeZone: string;
  /** The call's past-time tolerance, else the scheduler's. */
  readonly pastLimit: (opts: PastTimePolicy) => number | null;
  /** The live job holding `key` (the Scheduler's getByKey). */
  readonly getByKey: (key: string, opts: { tenant?: string }) => Promise<Job | null>;
  /** Wakes the watcher for a due time earlier than it planned for. */
  readonly wakeFor: (dueAt: number) => void;
  /** Tells the Scheduler's listeners what changed. */
  readonly changed: (kind: JobChange["kind"], job: Job) => void;
}

/** Reschedule and retry, by id or (reschedule) by key, through one path. */
export class JobMoves {
  constructor(private readonly d: JobMovesDeps) {}

  /** Reschedule or retry the job `ref` names: by id, or (reschedule) the key's live job. */
  async move(
    kind: "reschedule" | "retry",
    ref: { id: string } | { key: string },
    when: DueTime | DueTimeFields,
    opts: MoveOptions,
  ): Promise<RescheduleResult> {
    if ("id" in ref && typeof ref.id !== "string") {
      throw new InvalidJobError("id", "a job id string", ref.id);
    }
    const now = this.d.clock.now();
    const fields = dueTimeFieldsOf(when, opts);
    const dueAt = resolveDueTime(fields, {
      now,
      maxPastMs: this.d.pastLimit(opts),
      defaultTimeZone: this.d.defaultTimeZone,
    });
    // a safe integer: past that PostgreSQL answers an error for the bigint, not a conflict
    if (opts.expectedVersion !== undefined) {
      requireInteger(opts.expectedVersion, "expectedVersion", 0, Number.MAX_SAFE_INTEGER);
    }
    // by key: the job the key names now, checked (fully validated) like one named by id
    const holder = "key" in ref ? await this.d.getByKey(ref.key, tenantOf(opts)) : null;
    if ("key" in ref && !holder) return { outcome: "not-found" };
    const tenant = holder?.tenant ?? opts.tenant;
    const params = {
      id: holder?.id ?? (ref as { id: string }).id,
      dueAt,
      now,
      ...(tenant === undefined ? {} : { tenant }),
      ...(opts.expectedVersion === undefined ? {} : { expectedVersion: opts.expectedVersion }),
    };
    const r =
      kind === "reschedule"
        ? await this.d.store.jobReschedule(params)
        : await this.d.store.jobRetry(params);
    if (r.outcome === "rescheduled") {
      this.d.wakeFor(dueAt);
      this.d.changed(kind === "reschedule" ? "rescheduled" : "retried", r.job);
    }
    return r;
  }
}

/** The move methods of a Scheduler whose JobMoves `moves` gives. */
export function moveMethods<S extends { now(): number }>(
  moves: (self: S) => JobMoves,
): MoveMethods & ThisType<S> {
  return {
    async reschedule(id, dueAt, opts = {}) {
      return moves(this).move("reschedule", { id }, dueAt, opts);
    },
    async retry(id, opts = {}) {
      const { dueAt, delayMs, ...rest } = opts;
      // With delayMs, the fields (with the zone and locale, checked when given); else the
      // bare time, read in the call's zone and locale as reschedule reads it.
      const when: DueTime | DueTimeFields =
        delayMs === undefined
          ? (dueAt ?? this.now())
          : { dueAt, delayMs, timeZone: rest.timeZone, locale: rest.locale };
      return moves(this).move("retry", { id }, when, rest);
    },
  };
}

function tenantOf(opts: { tenant?: string }): { tenant?: string } {
  return opts.tenant === undefined ? {} : { tenant: opts.tenant };
}
