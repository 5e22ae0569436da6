import { comingOccurrences, scheduleView } from "../api/schedule-view.js";
import type { ScheduleInfo } from "../api/series.js";
import type { JobStatus } from "../core/job.js";
import { ruleParts } from "../core/recurrence/index.js";
import type { ScheduleState } from "../core/series.js";
import { isObject } from "../core/validate.js";
import { REMINDER_TARGET } from "./reminders.js";

/** Occurrences shown ahead: the pending one and the two after it. */
const NEXT_SHOWN = 3;

/** One coming occurrence, in UTC and in the series' zone. */
export interface OccurrenceView {
  readonly at: string;
  readonly at_local: string;
}

/**
 * What the tools show of a recurring series (created by task.create with `recurrence`): the
 * rule as given and in words, its zone, state, coming occurrences and what the last one did.
 * The pending occurrence is itself a task (`next_job_id`), listed and shown as tasks are.
 */
export interface SeriesView {
  /** The series' id; task.status, task.cancel and task.reschedule take it as job_id. */
  readonly series_id: string;
  readonly job_id: string;
  readonly id: string;
  readonly kind: "series";
  readonly description: string | null;
  readonly state: ScheduleState;
  /** The rule as stored: a cron expression or an RRULE (English is stored as its RRULE). */
  readonly recurrence: string;
  /** The rule in words, with its zone: "every weekday at 09:00 (Europe/Paris)". */
  readonly recurrence_text: string;
  readonly timezone: string;
  readonly target_kind: "reminder" | "webhook" | "handler";
  readonly webhook_url: string | null;
  /** The next occurrences (the first is the pending task's); empty unless active. */
  readonly next_occurrences: OccurrenceView[];
  /** The pending occurrence's task, or null (paused, ended). */
  readonly next_job_id: string | null;
  readonly fired_count: number;
  /** Occurrences skipped by the catch-up policy after downtime. */
  readonly missed_count: number;
  /** The last fired occurrence's task and its status, or null before the first. */
  readonly last_outcome: { readonly job_id: string; readonly status: JobStatus } | null;
  /** Bumped on every change; pass as task.reschedule's expected_version. */
  readonly version: number;
  readonly created_at: string;
}

/**
 * The API's schedule view (scheduleView, the one mapping of a series) in the tools' words:
 * its fields renamed for a model (snake_case, the rule as one string, the payload's
 * description), plus what only the tools show: the coming occurrences and the target's kind.
 */
export function seriesView(s: ScheduleInfo): SeriesView {
  const v = scheduleView(s);
  const p = isObject(v.payload) ? v.payload : {};
  const webhook = /^https?:\/\//i.test(v.target);
  return {
    series_id: v.id,
    job_id: v.id,
    id: v.id,
    kind: "series",
    description: typeof p.description === "string" ? p.description : null,
    state: v.state,
    recurrence: ruleParts(s.rule).text, // the view's cron or rrule
    recurrence_text: v.description,
    timezone: v.timeZone,
    target_kind: v.target === REMINDER_TARGET ? "reminder" : webhook ? "webhook" : "handler",
    webhook_url: webhook ? v.target : null,
    next_occurrences: comingOccurrences(s, NEXT_SHOWN).map((o) => ({
      at: o.at,
      at_local: o.atLocal,
    })),
    next_job_id: v.nextJobId,
    fired_count: v.firedCount,
    missed_count: v.missedCount,
    last_outcome:
      v.lastOutcome === null ? null : { job_id: v.lastOutcome.jobId, status: v.lastOutcome.status },
    version: v.version,
    created_at: v.createdAt,
  };
}

/** One line a person (or model) can read at a glance, as statusLine is for a task. */
export function seriesLine(v: SeriesView): string {
  const what = v.description === null ? "" : ` "${v.description}"`;
  const head = `series ${v.id}${what} fires ${v.recurrence_text}`;
  const fired = `fired ${v.fired_count} time(s)`;
  const last =
    v.last_outcome === null
      ? ""
      : `; last occurrence ${v.last_outcome.status} (task ${v.last_outcome.job_id})`;
  switch (v.state) {
    case "active": {
      const next = v.next_occurrences[0];
      const when = next === undefined ? "none" : `${next.at_local} (task ${v.next_job_id})`;
      return `active: ${head}; next ${when}; ${fired}${last}`;
    }
    case "paused":
      return `paused: ${head}; nothing fires until it is resumed; ${fired}${last}`;
    case "ended":
      return `ended: ${head}; no occurrence is left; ${fired}${last}`;
  }
}
