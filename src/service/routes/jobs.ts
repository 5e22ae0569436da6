import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Scheduler } from "../../api/scheduler.js";
import { Described, InvalidJobError, InvalidJobsError } from "../../core/errors.js";
import { rejectUnknownFields, requireObject } from "../../core/validate.js";
import { ApiError, invalid, jobNotFound, refused } from "../http-errors.js";
import { tooLate } from "../../http/job-refusals.js";
import { jobView, toScheduleInput } from "../job-input.js";
import { jobChangeRoutes } from "./job-changes.js";
import { localDue, sendJob } from "./job-replies.js";
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
 * /v1/jobs: create one or many, get, list, reschedule, cancel (by id or by key). Every
 * handler scopes to the request's tenant; another tenant's job answers exactly as a missing
 * one (jobNotFound).
 */
export function jobRoutes(app: FastifyInstance, o: JobRoutesOptions): void {
  createRoutes(app, o);
  readRoutes(app, o.scheduler);
  jobChangeRoutes(app, o);
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
    const { job, created, outcome } = await s.schedule(input);
    // nothing silently lost: a replacement that met a firing job is refused as such
    if (outcome === "too-late") throw refused(tooLate(job, "replaced"));
    return sendJob(reply.code(created ? 201 : 200), job, {
      created,
      outcome,
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
      jobs: results.map((r) => ({ created: r.created, outcome: r.outcome, job: jobView(r.job) })),
    });
  });
}

/** GET /v1/jobs/:id, GET /v1/jobs and GET /v1/jobs/count. */
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

  app.get("/v1/jobs/count", async (request) => {
    const q = listQueryFrom(request.query);
    if (q.cursor !== undefined || q.limit !== undefined) {
      const field = q.cursor !== undefined ? "cursor" : "limit";
      throw invalid(new InvalidJobError(field, "no such parameter on a count", q[field]));
    }
    const count = await s.countJobs({ ...q, tag: q.tag!, tenant: request.tenant });
    return { count };
  });
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
