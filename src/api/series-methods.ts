import type { Occurrence } from "../core/recurrence/index.js";
import type { ScheduleState } from "../core/series.js";
import type {
  PreviewInput,
  RecurringInput,
  ScheduleChangeOptions,
  ScheduleInfo,
  ScheduleRecurringResult,
  SchedulesPage,
  SeriesOperations,
} from "./series.js";

/** The Scheduler's methods for recurring series (docs/recurring.md). */
export interface SeriesMethods {
  /**
   * Creates a recurring series ({ cron | rrule, timeZone, target, payload, ... }): only its
   * next occurrence exists as a job; each claim of one writes the next (docs/recurring.md).
   * With a `key` held by a stored series of the tenant, that series comes back, created false.
   */
  scheduleRecurring(input: RecurringInput): Promise<ScheduleRecurringResult>;

  /** One series, or null. With `tenant`, another tenant's series is null too. */
  getSchedule(id: string, opts?: { tenant?: string }): Promise<ScheduleInfo | null>;

  /** A page of series in creation order, by tenant and state. */
  listSchedules(query?: {
    tenant?: string;
    state?: ScheduleState;
    cursor?: string;
    limit?: number;
  }): Promise<SchedulesPage>;

  /**
   * Changes a series' rule or template (the fields of scheduleRecurring but tenant and key;
   * null clears start, end or count); its pending occurrence is replaced in the same write.
   */
  updateSchedule(
    id: string,
    changes: Partial<RecurringInput>,
    opts?: ScheduleChangeOptions,
  ): Promise<ScheduleInfo>;

  /** Pauses a series: its pending occurrence is cancelled. */
  pauseSchedule(id: string, opts?: ScheduleChangeOptions): Promise<ScheduleInfo>;

  /** Resumes a paused series from its first occurrence after now. */
  resumeSchedule(id: string, opts?: ScheduleChangeOptions): Promise<ScheduleInfo>;

  /** Skips a series' pending occurrence (cancelled; the one after it is written). */
  skipNextOccurrence(id: string, opts?: ScheduleChangeOptions): Promise<ScheduleInfo>;

  /** Deletes a series; its pending occurrence is cancelled. Resolves to the series as it was. */
  deleteSchedule(id: string, opts?: ScheduleChangeOptions): Promise<ScheduleInfo>;

  /**
   * The next `count` occurrences after `from` (default now) of a stored series
   * (`scheduleId`) or of a rule and zone not yet stored ({ cron | rrule, timeZone }).
   */
  previewOccurrences(input: PreviewInput): Promise<Occurrence[]>;
}

/** The series methods of a Scheduler whose SeriesOperations `series` gives. */
export function seriesMethods<S>(
  series: (self: S) => SeriesOperations,
): SeriesMethods & ThisType<S> {
  return {
    scheduleRecurring(input) {
      return series(this).create(input);
    },
    getSchedule(id, opts = {}) {
      return series(this).get(id, opts);
    },
    listSchedules(query = {}) {
      return series(this).list(query);
    },
    updateSchedule(id, changes, opts = {}) {
      return series(this).update(id, changes, opts);
    },
    pauseSchedule(id, opts = {}) {
      return series(this).pause(id, opts);
    },
    resumeSchedule(id, opts = {}) {
      return series(this).resume(id, opts);
    },
    skipNextOccurrence(id, opts = {}) {
      return series(this).skipNext(id, opts);
    },
    deleteSchedule(id, opts = {}) {
      return series(this).delete(id, opts);
    },
    previewOccurrences(input) {
      return series(this).preview(input);
    },
  };
}
