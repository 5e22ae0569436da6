import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Scheduler } from "../../api/scheduler.js";
import { DUE_TIME_FIELDS } from "../../core/due-time.js";
import { isoInZone } from "../../core/wall-time.js";
import { Described, InvalidJobError, InvalidJobsError } from "../../core/errors.js";
import type { Job } from "../../core/job.js";
import { rejectUnknownFields, requireObject } from "../../core/validate.js";
import { ApiError, invalid, jobNotFound, refused } from "../http-errors.js";
import { jobEtag, parseIfMatch, tooLate, versionConflict } from "../../http/job-refusals.js";
import { jobView, toScheduleInput } from "../job-input.js";
import { listQueryFrom } from "./list-params.js";

/** Most jobs in one batch request. */
export const MAX_BATCH = 1000;

export interface JobRoutesOptions {
  readonly scheduler: Scheduler;
  readonly allowPrivateTargets: boolean;
  /** Body limit of single-job requests, in bytes. */
  readonly bodyLimit: number;
  /** Body limit of batch requests, in bytes. */
  readonly batchBodyLimit: number;
}

/** One item's error in a rejected batch. */
interface ItemError {
  index: number;
  field: string;
  expected: string;
  received: string;
  message: string;
}

/**
 * /v1/jobs: create one or many, get, list, reschedule, cancel. Every handler scopes to the
 * request's tenant; another tenant's job answers exactly as a missing one (jobNotFound).
 */
export function jobRoutes(app: FastifyInstance, o: JobRoutesOptions): void {
  createRoutes(app, o);
  readRoutes(app, o.scheduler);
  changeRoutes(app, o);
}

/** POST /v1/jobs and POST /v1/jobs/batch. */
function createRoutes(app: FastifyInstance, o: JobRoutesOptions): void {
  const s = o.scheduler;
  const ctxOf = (request: FastifyRequest, prefix = "") => ({
    tenant: request.tenant,
    allowPrivateTargets: o.allowPrivateTargets,
    prefix,
  });

  app.post("/v1/jobs", { bodyLimit: o.bodyLimit }, async (request, reply) => {
    const input = toScheduleInput(request.body, ctxOf(request));
    const { job, created } = await s.schedule(input);
    return sendJob(reply.code(created ? 201 : 200), job, {
      created,
      ...localDue(job, input.timeZone ?? s.options.timeZone),
    });
  });

  app.post("/v1/jobs/batch", { bodyLimit: o.batchBodyLimit }, async (request, reply) => {
    const body = requireObject(request.body, "body");
    rejectUnknownFields(body, ["jobs"], "");
    const items = body.jobs;
    if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH) {
      throw new InvalidJobError("jobs", `an array of 1 to ${MAX_BATCH} jobs`, items);
    }
    // Every item is checked before anything is stored, so the answer lists all bad items.
    const results = await s
      .scheduleMany(items, {
        prepare: (raw, prefix) => toScheduleInput(raw, ctxOf(request, prefix)),
      })
      .catch((err: unknown) => {
        throw err instanceof InvalidJobsError ? batchInvalid(err) : err;
      });
    const anyCreated = results.some((r) => r.created);
    return reply.code(anyCreated ? 201 : 200).send({
      jobs: results.map((r) => ({ created: r.created, job: jobView(r.job) })),
    });
  });
}

/** GET /v1/jobs/:id and GET /v1/jobs. */
function readRoutes(app: FastifyInstance, s: Scheduler): void {
  app.get<{ Params: { id: string } }>("/v1/jobs/:id", async (request, reply) => {
    const job = await s.get(request.params.id, { tenant: request.tenant });
    if (!job) throw jobNotFound(request.params.id);
    return sendJob(reply, job);
  });

  app.get("/v1/jobs", async (request) => {
    const page = await s.list({ ...listQueryFrom(request.query), tenant: request.tenant });
    return { jobs: page.jobs.map(jobView), nextCursor: page.nextCursor };
  });
}

/** POST /v1/jobs/:id/reschedule and POST /v1/jobs/:id/cancel. */
function changeRoutes(app: FastifyInstance, o: JobRoutesOptions): void {
  const s = o.scheduler;
  app.post<{ Params: { id: string } }>(
    "/v1/jobs/:id/reschedule",
    { bodyLimit: o.bodyLimit },
    async (request, reply) => {
      const { id } = request.params;
      const expectedVersion = parseIfMatch(request.headers["if-match"]);
      const body = rescheduleBody(request.body);
      const r = await s.reschedule(id, body, {
        tenant: request.tenant,
        ...(expectedVersion === undefined ? {} : { expectedVersion }),
      });
      switch (r.outcome) {
        case "rescheduled": {
          const zone = typeof body.timeZone === "string" ? body.timeZone : s.options.timeZone;
          return sendJob(reply, r.job, { outcome: r.outcome, ...localDue(r.job, zone) });
        }
        case "too-late":
          throw refused(tooLate(r.job, "rescheduled"));
        case "version-conflict":
          throw refused(versionConflict(r.job, expectedVersion));
        case "key-conflict":
        case "not-found":
          throw jobNotFound(id);
      }
    },
  );

  app.post<{ Params: { id: string } }>(
    "/v1/jobs/:id/cancel",
    { bodyLimit: o.bodyLimit },
    async (request, reply) => {
      const { id } = request.params;
      if (request.body !== undefined && request.body !== null) {
        rejectUnknownFields(requireObject(request.body, "body"), [], "");
      }
      const r = await s.cancel(id, { tenant: request.tenant });
      if (r.outcome === "not-found") throw jobNotFound(id);
      if (r.outcome === "too-late") throw refused(tooLate(r.job, "cancelled"));
      return sendJob(reply, r.job, { outcome: r.outcome });
    },
  );
}

function sendJob(reply: FastifyReply, job: Job, extra: Record<string, unknown> = {}): FastifyReply {
  return reply
    .header("etag", jobEtag(job))
    .header("location", `/v1/jobs/${job.id}`)
    .send({ ...extra, job: jobView(job) });
}

/**
 * The due time as the clocks of the zone the request was read in show it, with that zone:
 * "2026-12-03T10:00:00.000+01:00", "Europe/Paris" (the request's timeZone, else the
 * service's).
 */
function localDue(job: Job, timeZone: string): { dueAtLocal: string; timeZone: string } {
  return { dueAtLocal: isoInZone(job.dueAt, timeZone), timeZone };
}

/**
 * 400 for a batch with bad items: the first item's error on top (as for one job), and
 * `errors` listing every bad item with its index.
 */
function batchInvalid(err: InvalidJobsError): ApiError {
  const errors: ItemError[] = err.items.map(({ index, error }) => {
    const e = invalid(error).body().error;
    return {
      index,
      field: e.field,
      expected: e.expected,
      received: e.received,
      message: e.message,
    };
  });
  const first = errors[0]!;
  return new ApiError(
    400,
    "invalid",
    first.field,
    first.expected,
    new Described(first.received), // already described once, as in `errors`
    `${errors.length} of ${err.total} jobs are invalid; nothing was stored. First: ${first.message}`,
    { errors },
  );
}

/** A reschedule body: `dueAt` (+ `timeZone`) or `delayMs`, read by the scheduler. */
function rescheduleBody(raw: unknown): Record<string, unknown> {
  const body = requireObject(raw, "body");
  rejectUnknownFields(body, DUE_TIME_FIELDS, "");
  return body;
}
