import type { Job } from "../core/job.js";
import { MAX_KEY_LENGTH } from "../core/schedule-input.js";
import type { DueTimeFields } from "../core/due-time.js";
import { requireString } from "../core/validate.js";
import type { CancelResult, RescheduleResult, Store } from "../store/store.js";
import type { DueTime, MoveOptions } from "./scheduler-types.js";

/** The Scheduler's methods on the live job holding an idempotency key. */
export interface ByKeyMethods {
  /** The live job of `tenant` (default: the default tenant) holding idempotency key `key`, or null. */
  getByKey(key: string, opts?: { tenant?: string }): Promise<Job | null>;

  /**
   * Cancels the live job of `tenant` (default: the default tenant) holding idempotency key
   * `key`, as `cancel` does by id: `cancelled`, `too-late` (it is firing), or `not-found` (no
   * live job holds the key: none ever did, or it finished and freed it).
   */
  cancelByKey(key: string, opts?: { tenant?: string }): Promise<CancelResult>;

  /**
   * Reschedules the live job holding `key`, as `reschedule` does by id (same outcomes, the
   * same `expectedVersion` check): the job the key names when the call reads it.
   */
  rescheduleByKey(
    key: string,
    dueAt: DueTime | DueTimeFields,
    opts?: MoveOptions,
  ): Promise<RescheduleResult>;
}

/** What the by-key methods use of the Scheduler beyond its public methods. */
export interface ByKeyParts {
  readonly store: Store;
  readonly defaultTenant: string;
  /** The Scheduler's reschedule of the job `key` names (read and checked as by id). */
  readonly rescheduleKey: (
    key: string,
    dueAt: DueTime | DueTimeFields,
    opts: MoveOptions,
  ) => Promise<RescheduleResult>;
}

/** The by-key methods of a Scheduler whose ByKeyParts `parts` gives. */
export function byKeyMethods<
  S extends ByKeyMethods & {
    cancel(id: string, opts: { tenant?: string }): Promise<CancelResult>;
  },
>(parts: (self: S) => ByKeyParts): ByKeyMethods & ThisType<S> {
  return {
    async getByKey(key, opts = {}) {
      requireString(key, "key", { max: MAX_KEY_LENGTH });
      const p = parts(this);
      return p.store.jobGetByKey({ tenant: opts.tenant ?? p.defaultTenant, key });
    },
    async cancelByKey(key, opts = {}) {
      const job = await this.getByKey(key, opts);
      if (!job) return { outcome: "not-found" };
      return this.cancel(job.id, { tenant: job.tenant });
    },
    async rescheduleByKey(key, dueAt, opts = {}) {
      requireString(key, "key", { max: MAX_KEY_LENGTH });
      return parts(this).rescheduleKey(key, dueAt, opts);
    },
  };
}
