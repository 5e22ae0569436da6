import {
  comingOccurrences,
  scheduleView,
  type ComingOccurrence,
  type ScheduleView,
} from "../api/schedule-view.js";
import type { Scheduler } from "../api/scheduler.js";
import type { ScheduleInfo } from "../api/series.js";
import { ScheduleNotFoundError, VersionConflictError } from "../core/errors.js";
import { readQuery } from "../core/query-params.js";
import { SCHEDULE_STATES } from "../core/series.js";
import { parseIfMatch } from "../http/job-refusals.js";
import { errorAnswer, type Answer } from "./answers.js";

/** Occurrences shown ahead of each series: the pending one and the four after it. */
const NEXT_SHOWN = 5;

/**
 * A series as the schedules page shows it: the API's schedule view, one mapping for every
 * surface, and the coming occurrences beside it (the API answers those at
 * /v1/schedules/{id}/next; the page shows them in its list).
 */
export type ScheduleRow = ScheduleView & {
  /** The pending occurrence and those after it, in UTC and in the series' zone. */
  readonly nextOccurrences: ComingOccurrence[];
};

export function scheduleRow(s: ScheduleInfo): ScheduleRow {
  return { ...scheduleView(s), nextOccurrences: comingOccurrences(s, NEXT_SHOWN) };
}

/** Query of /v1/dashboard/schedules: by state, a page at a time. */
const SCHEDULES_QUERY = {
  state: { kind: "enum", of: SCHEDULE_STATES },
  cursor: { kind: "text", max: 64 },
  limit: { kind: "int", min: 1, max: 200 },
} as const;

/** A page of the tenant's series in creation order. */
export async function listScheduleRows(
  s: Scheduler,
  tenant: string,
  query: unknown,
): Promise<{ schedules: ScheduleRow[]; nextCursor: string | null }> {
  const q = readQuery(query, SCHEDULES_QUERY);
  const page = await s.listSchedules({
    tenant,
    limit: q.limit ?? 50,
    ...(q.state === undefined ? {} : { state: q.state }),
    ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
  });
  return { schedules: page.schedules.map(scheduleRow), nextCursor: page.nextCursor };
}

/** One series and its ETag (its version), or 404. */
export async function scheduleDetail(s: Scheduler, tenant: string, id: string): Promise<Answer> {
  const found = await s.getSchedule(id, { tenant });
  if (!found) return scheduleNotFound(id);
  return { status: 200, body: { schedule: scheduleRow(found) }, headers: etag(found) };
}

/**
 * Pause or resume with the version check of the job actions: `If-Match` names the version
 * the page showed, a series changed since answers 412 with the series as it now is (and
 * nothing changes), another tenant's or a missing one 404. Pausing a paused series (or
 * resuming an active one) changes nothing and answers it as it is.
 */
export async function changeSchedule(
  s: Scheduler,
  tenant: string,
  id: string,
  verb: "pause" | "resume",
  ifMatch: string | undefined,
): Promise<Answer> {
  const expectedVersion = parseIfMatch(ifMatch);
  const opts = { tenant, ...(expectedVersion === undefined ? {} : { expectedVersion }) };
  try {
    const changed =
      verb === "pause" ? await s.pauseSchedule(id, opts) : await s.resumeSchedule(id, opts);
    const outcome = verb === "pause" ? "paused" : "resumed";
    return {
      status: 200,
      body: { outcome, schedule: scheduleRow(changed) },
      headers: etag(changed),
    };
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return scheduleNotFound(id);
    if (!(err instanceof VersionConflictError)) throw err;
    const now = await s.getSchedule(id, { tenant });
    if (!now) return scheduleNotFound(id);
    return {
      ...errorAnswer(
        412,
        "version-conflict",
        {
          field: "if-match",
          expected: `the schedule's current version (${now.version})`,
          received: String(expectedVersion),
          message: `schedule ${id} changed: it is at version ${now.version}`,
        },
        { outcome: "version-conflict", schedule: scheduleRow(now) },
      ),
      headers: etag(now),
    };
  }
}

function etag(s: ScheduleInfo): Record<string, string> {
  return { etag: `"${s.version}"` };
}

function scheduleNotFound(id: string): Answer {
  return errorAnswer(404, "not-found", {
    field: "id",
    expected: "the id of one of your schedules",
    received: id,
    message: `schedule ${id} not found`,
  });
}
