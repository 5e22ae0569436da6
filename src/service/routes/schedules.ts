import type { FastifyInstance, FastifyReply } from "fastify";
import { occurrenceView, scheduleView } from "../../api/schedule-view.js";
import type { Scheduler } from "../../api/scheduler.js";
import type { PreviewInput, ScheduleChangeOptions, ScheduleInfo } from "../../api/series.js";
import { ScheduleNotFoundError, VersionConflictError } from "../../core/errors.js";
import { readQuery } from "../../core/query-params.js";
import { MAX_PREVIEW } from "../../core/recurrence/index.js";
import { SCHEDULE_STATES } from "../../core/series.js";
import { rejectUnknownFields, requireObject } from "../../core/validate.js";
import { parseIfMatch } from "../../http/job-refusals.js";
import { ApiError } from "../http-errors.js";
import { toRecurringInput, toSchedulePatch } from "../schedule-input.js";

export interface ScheduleRoutesOptions {
  readonly scheduler: Scheduler;
  readonly allowPrivateTargets: boolean;
  /** Body limit of the requests, in bytes (the single-job limit). */
  readonly bodyLimit: number;
}

/** The fields of POST /v1/schedules/preview: a rule not stored, its zone and the window. */
export const HTTP_PREVIEW_FIELDS = [
  "cron",
  "rrule",
  "timeZone",
  "gap",
  "overlap",
  "from",
  "count",
] as const;

const LIST_PARAMS = {
  state: { kind: "enum", of: SCHEDULE_STATES },
  cursor: { kind: "text", max: 64 },
  limit: { kind: "int", min: 1, max: 1000 },
} as const;

const NEXT_PARAMS = {
  count: { kind: "int", min: 1, max: MAX_PREVIEW },
  from: { kind: "time" },
} as const;

type IdRequest = { Params: { id: string } };

/**
 * /v1/schedules: recurring series over the Scheduler's series API (create, get, list,
 * update, pause, resume, skip, delete, preview). Every handler scopes to the request's
 * tenant: another tenant's series answers exactly as a missing one (404). Changes take
 * If-Match (412 when the series moved on), as the job routes do.
 */
export function scheduleRoutes(app: FastifyInstance, o: ScheduleRoutesOptions): void {
  const s = o.scheduler;
  const ctxOf = (tenant: string) => ({ tenant, allowPrivateTargets: o.allowPrivateTargets });
  const limit = { bodyLimit: o.bodyLimit };

  app.post("/v1/schedules", limit, async (request, reply) => {
    const r = await s.scheduleRecurring(toRecurringInput(request.body, ctxOf(request.tenant)));
    return sendSchedule(reply.code(r.created ? 201 : 200), r.schedule, { created: r.created });
  });

  app.get("/v1/schedules", async (request) => {
    const q = readQuery(request.query, LIST_PARAMS);
    const page = await s.listSchedules({ ...q, tenant: request.tenant });
    return { schedules: page.schedules.map(scheduleView), nextCursor: page.nextCursor };
  });

  app.post("/v1/schedules/preview", limit, async (request) => {
    const body = requireObject(request.body, "body");
    rejectUnknownFields(body, HTTP_PREVIEW_FIELDS, "");
    const input = { ...body, tenant: request.tenant } as PreviewInput;
    const zone = input.timeZone ?? s.options.timeZone;
    const occurrences = await s.previewOccurrences(input);
    return { timeZone: zone, occurrences: occurrences.map((x) => occurrenceView(x, zone)) };
  });

  app.get<IdRequest>("/v1/schedules/:id", async (request, reply) => {
    const found = await s.getSchedule(request.params.id, { tenant: request.tenant });
    if (!found) throw scheduleNotFound(request.params.id);
    return sendSchedule(reply, found);
  });

  app.get<IdRequest>("/v1/schedules/:id/next", async (request) => {
    const { id } = request.params;
    const q = readQuery(request.query, NEXT_PARAMS);
    const found = await s.getSchedule(id, { tenant: request.tenant });
    if (!found) throw scheduleNotFound(id);
    const occurrences = await answerOf(s, id, request.tenant, () =>
      s.previewOccurrences({ ...q, scheduleId: id, tenant: request.tenant }),
    );
    const zone = found.timeZone;
    return { timeZone: zone, occurrences: occurrences.map((x) => occurrenceView(x, zone)) };
  });

  changeRoutes(app, o, ctxOf);
}

type Change = (id: string, opts: ScheduleChangeOptions) => Promise<ScheduleInfo>;

/** PATCH, DELETE and the pause, resume and skip actions: one handler shape, If-Match each. */
function changeRoutes(
  app: FastifyInstance,
  o: ScheduleRoutesOptions,
  ctxOf: (tenant: string) => { tenant: string; allowPrivateTargets: boolean },
): void {
  const s = o.scheduler;
  const route = (
    method: "patch" | "delete" | "post",
    path: string,
    change: (body: unknown, tenant: string) => Change,
  ): void => {
    app[method]<IdRequest>(path, { bodyLimit: o.bodyLimit }, async (request, reply) => {
      const { id } = request.params;
      const expectedVersion = parseIfMatch(request.headers["if-match"]);
      const run = change(request.body, request.tenant);
      const changed = await answerOf(s, id, request.tenant, () =>
        run(id, {
          tenant: request.tenant,
          ...(expectedVersion === undefined ? {} : { expectedVersion }),
        }),
      );
      return sendSchedule(reply, changed, method === "delete" ? { deleted: true } : {});
    });
  };
  route("patch", "/v1/schedules/:id", (body, tenant) => {
    const changes = toSchedulePatch(body, ctxOf(tenant));
    return (id, opts) => s.updateSchedule(id, changes, opts);
  });
  route(
    "delete",
    "/v1/schedules/:id",
    bodiless((id, opts) => s.deleteSchedule(id, opts)),
  );
  route(
    "post",
    "/v1/schedules/:id/pause",
    bodiless((id, opts) => s.pauseSchedule(id, opts)),
  );
  route(
    "post",
    "/v1/schedules/:id/resume",
    bodiless((id, opts) => s.resumeSchedule(id, opts)),
  );
  route(
    "post",
    "/v1/schedules/:id/skip",
    bodiless((id, opts) => s.skipNextOccurrence(id, opts)),
  );
}

/** A change that takes no body: an empty object (or none) is accepted, anything else refused. */
function bodiless(call: Change): (body: unknown) => Change {
  return (body) => {
    if (body !== undefined && body !== null) {
      rejectUnknownFields(requireObject(body, "body"), [], "");
    }
    return call;
  };
}

/** The series' ETag: its version, quoted, read back as If-Match by parseIfMatch. */
function scheduleEtag(s: ScheduleInfo): string {
  return `"${s.version}"`;
}

function sendSchedule(
  reply: FastifyReply,
  s: ScheduleInfo,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return reply
    .header("etag", scheduleEtag(s))
    .header("location", `/v1/schedules/${s.id}`)
    .send({ ...extra, schedule: scheduleView(s) });
}

/**
 * Runs a series call, answering its refusals as the API does: not found (or another
 * tenant's) 404, a stale If-Match 412 with the series as it is now.
 */
async function answerOf<T>(
  s: Scheduler,
  id: string,
  tenant: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw scheduleNotFound(id);
    if (err instanceof VersionConflictError) {
      const now = await s.getSchedule(id, { tenant }).catch(() => null);
      throw new ApiError(
        412,
        "version-conflict",
        "if-match",
        `the schedule's current version (${err.actualVersion})`,
        String(err.expectedVersion),
        `schedule ${id} changed: it is at version ${err.actualVersion}`,
        { outcome: "version-conflict", ...(now ? { schedule: scheduleView(now) } : {}) },
        { etag: `"${err.actualVersion}"` },
      );
    }
    throw err;
  }
}

/** The one not-found answer of the series routes: a missing and another tenant's read the same. */
export function scheduleNotFound(id: string): ApiError {
  return new ApiError(
    404,
    "not-found",
    "id",
    "the id of one of your schedules",
    id,
    `schedule ${id} not found`,
  );
}
