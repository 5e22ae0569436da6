import type { Occurrence } from "../../src/core/recurrence/index.js";
import { newSeriesRecord, type Schedule, type ScheduleTemplate } from "../../src/core/series.js";

/**
 * Series records written straight to a store (the contract suite, store tests and benchmarks
 * that skip the scheduler's validation). No vitest import: bench/ uses it too.
 */

/** Fields of a series record a test may set; the template's fields one by one. */
export type SeriesOverrides = Partial<Omit<Schedule, "template">> & {
  readonly template?: Partial<ScheduleTemplate>;
};

const DAILY_TEMPLATE: ScheduleTemplate = {
  target: "t",
  payload: 1,
  targetOptions: null,
  maxAttempts: 3,
  expireAfterMs: null,
};

/**
 * An active series firing every day at 09:00 UTC (cron "0 9 * * *", gap shift, overlap
 * first, misfire fire-once) for tenant "a", created at `now`, with no pending occurrence yet
 * (withNext gives it one).
 */
export function dailySeries(id: string, now: number, over: SeriesOverrides = {}): Schedule {
  const { template, ...fields } = over;
  const record = newSeriesRecord(
    {
      id,
      tenant: "a",
      key: null,
      rule: { cron: "0 9 * * *" },
      timeZone: "UTC",
      gap: "shift",
      overlap: "first",
      misfire: "fire-once",
      misfireLimit: 100,
      misfireToleranceMs: 60_000,
      startAt: null,
      endAt: null,
      count: null,
      template: DAILY_TEMPLATE,
    },
    now,
  );
  return { ...record, ...fields, template: { ...DAILY_TEMPLATE, ...template } };
}

/** The occurrence of a UTC series at `at`, its nominal wall time (and key) read in UTC. */
export function utcOccurrence(at: number): Occurrence {
  const nominal = new Date(at).toISOString().slice(0, 19);
  return { at, nominal, key: nominal, mapping: "exact" };
}
