import type { FastifyInstance, FastifyRequest } from "fastify";
import type { MoveOptions, Scheduler } from "../../api/scheduler.js";
import { DUE_TIME_FIELDS, type DueTimeFields } from "../../core/due-time.js";
import type { CancelResult, RescheduleResult } from "../../api/scheduler.js";
import { rejectUnknownFields, requireObject } from "../../core/validate.js";
import { parseIfMatch, tooLate, versionConflict } from "../../http/job-refusals.js";
import { jobNotFound, keyNotFound, refused, type ApiError } from "../http-errors.js";
import { localDue, sendJob } from "./job-replies.js";

export interface JobChangeRoutesOptions {
  readonly scheduler: Scheduler;
  /** Body limit of the requests, in bytes. */
  readonly bodyLimit: number;
}

/**
 * How a route names its job: by id (`/v1/jobs/:id/...`) or by idempotency key
 * (`/v1/jobs/by-key/:key/...`, the tenant's live job holding it). Both answer the same.
 */
interface JobRef {
  readonly path: string;
  readonly param: "id" | "key";
  readonly notFound: (name: string) => ApiError;
  readonly reschedule: (
    s: Scheduler,
    name: string,
    body: DueTimeFields,
    opts: MoveOptions,
  ) => Promise<RescheduleResult>;
  readonly cancel: (s: Scheduler, name: string, tenant: string) => Promise<CancelResult>;
}

const BY_ID: JobRef = {
  path: "/v1/jobs/:id",
  param: "id",
  notFound: jobNotFound,
  reschedule: (s, id, body, opts) => s.reschedule(id, body, opts),
  cancel: (s, id, tenant) => s.cancel(id, { tenant }),
};

const BY_KEY: JobRef = {
  path: "/v1/jobs/by-key/:key",
  param: "key",
  notFound: keyNotFound,
  reschedule: (s, key, body, opts) => s.rescheduleByKey(key, body, opts),
  cancel: (s, key, tenant) => s.cancelByKey(key, { tenant }),
};

/**
 * Reschedule and cancel by id and by key, and GET by key (GET by id is with the reads):
 * one handler per operation, so both ways of naming a job give the same outcomes, the same
 * If-Match check and the same errors.
 */
export function jobChangeRoutes(app: FastifyInstance, o: JobChangeRoutesOptions): void {
  const s = o.scheduler;
  app.get<{ Params: { key: string } }>("/v1/jobs/by-key/:key", async (request, reply) => {
    const job = await s.getByKey(request.params.key, { tenant: request.tenant });
    if (!job) throw keyNotFound(request.params.key);
    return sendJob(reply, job);
  });
  for (const ref of [BY_ID, BY_KEY]) {
    rescheduleRoute(app, o, ref);
    cancelRoute(app, o, ref);
  }
}

type NamedRequest = FastifyRequest<{ Params: Record<string, string> }>;

function rescheduleRoute(app: FastifyInstance, o: JobChangeRoutesOptions, ref: JobRef): void {
  const s = o.scheduler;
  app.post(`${ref.path}/reschedule`, { bodyLimit: o.bodyLimit }, async (req, reply) => {
    const request = req as NamedRequest;
    const name = request.params[ref.param]!;
    const expectedVersion = parseIfMatch(request.headers["if-match"]);
    const body = rescheduleBody(request.body);
    const r = await ref.reschedule(s, name, body, {
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
        throw ref.notFound(name);
    }
  });
}

function cancelRoute(app: FastifyInstance, o: JobChangeRoutesOptions, ref: JobRef): void {
  const s = o.scheduler;
  app.post(`${ref.path}/cancel`, { bodyLimit: o.bodyLimit }, async (req, reply) => {
    const request = req as NamedRequest;
    const name = request.params[ref.param]!;
    if (request.body !== undefined && request.body !== null) {
      rejectUnknownFields(requireObject(request.body, "body"), [], "");
    }
    const r = await ref.cancel(s, name, request.tenant);
    if (r.outcome === "not-found") throw ref.notFound(name);
    if (r.outcome === "too-late") throw refused(tooLate(r.job, "cancelled"));
    return sendJob(reply, r.job, { outcome: r.outcome });
  });
}

/** A reschedule body: `dueAt` (+ `timeZone`) or `delayMs`, read by the scheduler. */
function rescheduleBody(raw: unknown): DueTimeFields {
  const body = requireObject(raw, "body");
  rejectUnknownFields(body, DUE_TIME_FIELDS, "");
  return body as DueTimeFields;
}
