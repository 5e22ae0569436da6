import type { Job, NewJob } from "../core/job.js";
import { stepSeries, type Schedule } from "../core/series.js";
import { rowToSchedule, type ScheduleRow } from "./schedule-row.js";

/**
 * The series step of one claim, for the whole batch at once, in the claim's transaction.
 * PostgreSQL reads every claimed occurrence's series row in one statement, this computes each
 * next occurrence (stepClaimedSeries), and the store writes the series rows in one statement
 * of arrays and the next occurrences in one insert. A batch of 500 occurrences so costs one
 * read, not a read and an update per occurrence (the profile of bench/series.ts: 500
 * occurrences held the event loop 383 ms against 99 ms for 500 one-shot jobs). SQLite steps
 * the series that step alike set-wise, a group at a time, and the others row by row
 * (stores/sqlite/series-advance.ts). The series of one rule firing together share one next()
 * (compile.ts).
 */

/** The ids of the claimed jobs that are occurrences, and the series they belong to. */
export interface ClaimedOccurrences {
  /** Series ids, each once (the rows to read). */
  readonly seriesIds: string[];
  /** Claimed occurrence job ids. */
  readonly jobIds: ReadonlySet<string>;
}

/** The claimed jobs' occurrences, or null when the claim holds none (nothing to read). */
export function claimedOccurrences(jobs: readonly Job[]): ClaimedOccurrences | null {
  let series: Set<string> | null = null;
  let ids: Set<string> | null = null;
  for (const j of jobs) {
    if (j.scheduleId === null) continue;
    (series ??= new Set()).add(j.scheduleId);
    (ids ??= new Set()).add(j.id);
  }
  return series === null ? null : { seriesIds: [...series], jobIds: ids! };
}

/** A series the claim could not advance: ended with `reason` (core/series.ts stepSeries). */
export interface BrokenSeries {
  readonly id: string;
  readonly jobId: string;
  readonly reason: string;
}

export interface SeriesBatchStep {
  /** The series advanced, as they are to be written (the claim's columns of each). */
  readonly advanced: Schedule[];
  readonly broken: BrokenSeries[];
  /** The next occurrences to insert. */
  readonly jobs: NewJob[];
}

/**
 * Steps each series whose pending occurrence (`next_job_id`) is among the claimed jobs. A
 * row naming another job advances nothing: its occurrence was claimed before (this one is a
 * re-claim after a lease ran out) or the series moved on, so an occurrence is neither
 * skipped nor written twice whatever crashed when. Two occurrences of one series in a batch
 * (a re-claimed one beside the pending one) advance it once, from the one it names.
 */
export function stepClaimedSeries(
  rows: readonly ScheduleRow[],
  claimed: ClaimedOccurrences,
  now: number,
  newId: () => string,
): SeriesBatchStep {
  const out: SeriesBatchStep = { advanced: [], broken: [], jobs: [] };
  for (const row of rows) {
    const jobId = row.next_job_id;
    if (jobId === null || !claimed.jobIds.has(jobId)) continue;
    const step = stepSeries(() => rowToSchedule(row), now, newId);
    if (step.kind === "broken") {
      out.broken.push({ id: row.id, jobId, reason: step.reason });
      continue;
    }
    out.advanced.push(step.schedule);
    if (step.job) out.jobs.push(step.job);
  }
  return out;
}
