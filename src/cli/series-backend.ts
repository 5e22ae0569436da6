import type { Command } from "commander";
import { occurrenceView, scheduleView, type OccurrenceView } from "../api/schedule-view.js";
import type { ScheduleView } from "../api/schedule-view.js";
import type { PreviewInput, RecurringInput } from "../api/series.js";
import type { ScheduleInput as HttpScheduleInput } from "../client/index.js";
import { InvalidJobError, ScheduleNotFoundError } from "../core/errors.js";
import type { ScheduleState } from "../core/series.js";
import { withExistingScheduler, withScheduler } from "./context.js";
import { RecordNotFound } from "./not-found.js";
import { callApi, remoteOf, RemoteOutcome, type Remote } from "./remote.js";

/**
 * Where `duetime schedule ...` works: the local database (the Scheduler's series API) or a
 * server (`--url`, the HTTP API through duetime/client). Both answer in the one schedule
 * view (src/api/schedule-view.ts), so every subcommand prints the same thing either way; a
 * series that is not there (or another tenant's) is a SeriesNotFound.
 */
export interface SeriesBackend {
  create(input: SeriesInput): Promise<{ created: boolean; schedule: ScheduleView }>;
  list(q: { state?: ScheduleState; cursor?: string; limit?: number }): Promise<{
    schedules: ScheduleView[];
    nextCursor: string | null;
  }>;
  get(id: string): Promise<ScheduleView>;
  change(id: string, verb: ChangeVerb): Promise<ScheduleView>;
  /** The next occurrences of a stored series, in its zone. */
  next(id: string, q: Window): Promise<Occurrences>;
  /** The next occurrences of a rule not stored. */
  preview(rule: RuleInput, q: Window): Promise<Occurrences>;
}

export type ChangeVerb = "pause" | "resume" | "delete";

/** What `schedule add` collects from its flags: the library's field names. */
export type SeriesInput = Omit<RecurringInput, "targetOptions"> & {
  /** Webhook headers: --url only. */
  readonly headers?: Record<string, string>;
};

export interface RuleInput {
  readonly cron?: string;
  readonly rrule?: string;
  readonly timeZone: string;
}

export interface Window {
  readonly count?: number;
  readonly from?: string | number;
}

export interface Occurrences {
  readonly timeZone: string;
  readonly occurrences: OccurrenceView[];
}

/** The series asked for is not there (or is another tenant's). */
export class SeriesNotFound extends RecordNotFound {
  constructor(id: string) {
    super("schedule", id);
  }
}

/** The backend of the command: the server of --url, else the database (--tenant scoping). */
export function seriesBackend(cmd: Command, tenant: string | undefined): SeriesBackend {
  const remote = remoteOf(cmd);
  if (!remote) return localBackend(cmd, tenant);
  if (tenant !== undefined) {
    throw new InvalidJobError("--tenant", "no --tenant with --url (the API key decides)", tenant);
  }
  return remoteBackend(remote);
}

function localBackend(cmd: Command, tenant: string | undefined): SeriesBackend {
  const scope = tenant === undefined ? {} : { tenant };
  const found = async <T>(id: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) throw new SeriesNotFound(id);
      throw err;
    }
  };
  const window = (q: Window): Pick<PreviewInput, "count" | "from"> => ({
    ...(q.count === undefined ? {} : { count: q.count }),
    ...(q.from === undefined ? {} : { from: q.from }),
  });
  return {
    async create(input) {
      if (input.headers !== undefined) {
        throw new InvalidJobError(
          "--header",
          "--url (headers are for webhooks of a server)",
          Object.keys(input.headers)[0],
        );
      }
      const r = await withScheduler(cmd, (s) => s.scheduleRecurring({ ...input, ...scope }));
      return { created: r.created, schedule: scheduleView(r.schedule) };
    },
    async list(q) {
      const page = await withExistingScheduler(cmd, (s) => s.listSchedules({ ...q, ...scope }));
      return { schedules: page.schedules.map(scheduleView), nextCursor: page.nextCursor };
    },
    async get(id) {
      const s = await withExistingScheduler(cmd, (sch) => sch.getSchedule(id, scope));
      if (!s) throw new SeriesNotFound(id);
      return scheduleView(s);
    },
    async change(id, verb) {
      const s = await withExistingScheduler(cmd, (sch) =>
        found(id, () =>
          verb === "pause"
            ? sch.pauseSchedule(id, scope)
            : verb === "resume"
              ? sch.resumeSchedule(id, scope)
              : sch.deleteSchedule(id, scope),
        ),
      );
      return scheduleView(s);
    },
    async next(id, q) {
      return withExistingScheduler(cmd, async (sch) => {
        const s = await sch.getSchedule(id, scope);
        if (!s) throw new SeriesNotFound(id);
        const list = await found(id, () =>
          sch.previewOccurrences({ scheduleId: id, ...scope, ...window(q) }),
        );
        return {
          timeZone: s.timeZone,
          occurrences: list.map((o) => occurrenceView(o, s.timeZone)),
        };
      });
    },
    async preview(rule, q) {
      // A preview stores nothing: a scheduler in memory reads the rule, no database is opened.
      const list = await withScheduler(
        cmd,
        (s) => s.previewOccurrences({ ...rule, ...window(q) }),
        {},
        ":memory:",
      );
      return {
        timeZone: rule.timeZone,
        occurrences: list.map((o) => occurrenceView(o, rule.timeZone)),
      };
    },
  };
}

function remoteBackend(remote: Remote): SeriesBackend {
  const found = async <T>(id: string, call: Parameters<typeof callApi<T>>[1]): Promise<T> => {
    try {
      return await callApi(remote, call);
    } catch (err) {
      if (err instanceof RemoteOutcome && err.status === 404) throw new SeriesNotFound(id);
      throw err;
    }
  };
  return {
    create: (input) => callApi(remote, (c) => c.createSchedule(input as HttpScheduleInput)),
    list: (q) => callApi(remote, (c) => c.listSchedules(q)),
    get: (id) => found(id, (c) => c.getSchedule(id)),
    change: (id, verb) =>
      found(id, (c) =>
        verb === "pause"
          ? c.pauseSchedule(id)
          : verb === "resume"
            ? c.resumeSchedule(id)
            : c.deleteSchedule(id),
      ),
    next: (id, q) => found(id, (c) => c.nextOccurrences(id, httpWindow(q))),
    preview: (rule, q) =>
      callApi(remote, (c) => c.previewOccurrences({ ...rule, ...httpWindow(q) })),
  };
}

function httpWindow(q: Window): { count?: number; from?: string } {
  return {
    ...(q.count === undefined ? {} : { count: q.count }),
    ...(q.from === undefined ? {} : { from: String(q.from) }),
  };
}
