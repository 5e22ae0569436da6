import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import type { JobChange, Scheduler } from "../api/scheduler.js";
import { InvalidOptionError } from "../core/errors.js";
import { acceptJsonBodiesOnly } from "../http/json-bodies.js";
import { cancelJob, jobDetail, retryJob, snoozeJob } from "./actions.js";
import { futureView, nowView, searchJobs } from "./data.js";
import { DeadCounter } from "./dead-counter.js";
import {
  EVENT_STREAM_TYPE,
  EventStream,
  type EventStreamOptions,
  type StreamOwnersCheck,
} from "./events.js";
import { installErrorHandler, send, tenantResolver, type AuthResult } from "./http.js";
import {
  cancelOperation,
  listOperationRows,
  operationDetail,
  startOperation,
} from "./operations.js";
import { listPauseRows, makePause, resumePause } from "./pauses.js";
import { changeSchedule, listScheduleRows, scheduleDetail } from "./schedules.js";
import { defaultStaticDir, registerStaticRoutes } from "./static.js";

/** Options of the dashboard plugin. */
export interface DashboardOptions {
  /** The scheduler whose jobs the dashboard shows and changes. Required. */
  readonly scheduler: Scheduler;
  /**
   * Resolves a request to its tenant from `Authorization: Bearer <key>` (on `/v1/events`, a
   * `?key=` query is copied into that header first), or null when the key is missing or
   * unknown (answered 401), or an error answer to send instead (status, JSON body, headers):
   * the service answers a key past its rate limit 429 with Retry-After this way. Called once
   * per request to a `/v1` route, so a rate limit it applies counts each request once.
   */
  readonly authenticate: (req: FastifyRequest) => Promise<AuthResult>;
  /** Folder of the built front end (index.html, assets/). Default: the one shipped in dist. */
  readonly staticDir?: string;
  /** Live stream tuning (heartbeat, feed poll interval, stream caps, re-check interval). */
  readonly events?: EventStreamOptions;
  /**
   * Who opened a stream on `/v1/events`, called after `authenticate`: counted against
   * `events.maxStreamsPerKey` and re-checked by `streamOwnersValid` (the service gives the
   * API key's id). Default: the tenant.
   */
  readonly streamOwner?: (req: FastifyRequest) => string;
  /**
   * Re-checks the owners of the open streams every `events.recheckMs` and ends the streams
   * of those no longer valid (a revoked key). Default: none, streams end only when the
   * client or the server closes them.
   */
  readonly streamOwnersValid?: StreamOwnersCheck;
}

export type { Answer } from "./answers.js";
export type { AuthResult } from "./http.js";

type Params = { id: string };

/**
 * The web dashboard: the prebuilt single-page app at `/` (static files, no key needed: the
 * page asks for the API key and sends it on every call), its JSON data endpoints under
 * `/v1/dashboard/`, and the live stream of job changes at `GET /v1/events` (Server-Sent
 * Events). Every `/v1` route needs a key and sees only its tenant's jobs, recurring series,
 * bulk operations and pauses: another tenant's answers 404, as a missing one. Register it at the root (no
 * prefix): the page calls `v1/...` relative to itself.
 */
export const dashboardPlugin: FastifyPluginAsync<DashboardOptions> = async (app, options) => {
  const { scheduler, authenticate } = options;
  if (!scheduler || typeof scheduler.list !== "function") {
    throw new InvalidOptionError("scheduler", "a Scheduler", scheduler);
  }
  if (typeof authenticate !== "function") {
    throw new InvalidOptionError(
      "authenticate",
      "a function (request) => tenant | null",
      authenticate,
    );
  }
  const staticDir = options.staticDir ?? defaultStaticDir();
  const stream = new EventStream(scheduler, options.events, options.streamOwnersValid);
  const dead = new DeadCounter(scheduler.now());
  const countDead = (c: JobChange) => dead.record(c);
  scheduler.on("changed", countDead);
  // preClose: open streams would otherwise keep the server from closing.
  app.addHook("preClose", async () => {
    stream.close();
    scheduler.off("changed", countDead);
  });

  installErrorHandler(app);
  // The same body rules as the API's, in this plugin's own scope, for hosts that embed it.
  acceptJsonBodiesOnly(app);
  const tenantOf = tenantResolver(authenticate);
  registerStaticRoutes(app, staticDir);

  app.get("/v1/dashboard/future", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, { status: 200, body: await futureView(scheduler, tenant, req.query) });
  });

  app.get("/v1/dashboard/now", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, { status: 200, body: await nowView(scheduler, dead, tenant, req.query) });
  });

  app.get("/v1/dashboard/jobs", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, { status: 200, body: await searchJobs(scheduler, tenant, req.query) });
  });

  app.get<{ Params: Params }>("/v1/dashboard/jobs/:id", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    const a = await jobDetail(scheduler, tenant, req.params.id);
    if (a.job) void reply.header("etag", `"${a.job.version}"`);
    return send(reply, a);
  });

  app.post<{ Params: Params }>("/v1/dashboard/jobs/:id/cancel", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await cancelJob(scheduler, tenant, req.params.id));
  });

  app.post<{ Params: Params }>("/v1/dashboard/jobs/:id/reschedule", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    const ifMatch = req.headers["if-match"];
    return send(reply, await snoozeJob(scheduler, tenant, req.params.id, req.body, ifMatch));
  });

  app.post<{ Params: Params }>("/v1/dashboard/jobs/:id/retry", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    const ifMatch = req.headers["if-match"];
    return send(reply, await retryJob(scheduler, tenant, req.params.id, req.body, ifMatch));
  });

  app.get("/v1/dashboard/schedules", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, {
      status: 200,
      body: await listScheduleRows(scheduler, tenant, req.query),
    });
  });

  app.get<{ Params: Params }>("/v1/dashboard/schedules/:id", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await scheduleDetail(scheduler, tenant, req.params.id));
  });

  for (const verb of ["pause", "resume"] as const) {
    app.post<{ Params: Params }>(`/v1/dashboard/schedules/:id/${verb}`, async (req, reply) => {
      const tenant = await tenantOf(req, reply);
      if (tenant === null) return reply;
      const ifMatch = req.headers["if-match"];
      return send(reply, await changeSchedule(scheduler, tenant, req.params.id, verb, ifMatch));
    });
  }

  app.post("/v1/dashboard/operations", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await startOperation(scheduler, tenant, req.body));
  });

  app.get("/v1/dashboard/operations", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await listOperationRows(scheduler, tenant, req.query));
  });

  app.get<{ Params: Params }>("/v1/dashboard/operations/:id", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await operationDetail(scheduler, tenant, req.params.id));
  });

  app.post<{ Params: Params }>("/v1/dashboard/operations/:id/cancel", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await cancelOperation(scheduler, tenant, req.params.id));
  });

  app.get("/v1/dashboard/pauses", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await listPauseRows(scheduler, tenant, req.query));
  });

  app.post("/v1/dashboard/pauses", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await makePause(scheduler, tenant, req.body));
  });

  app.post<{ Params: Params }>("/v1/dashboard/pauses/:id/resume", async (req, reply) => {
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    return send(reply, await resumePause(scheduler, tenant, req.params.id));
  });

  // The live stream. EventSource cannot set headers, so `?key=` is accepted too: it is
  // copied into the Authorization header for `authenticate` (see docs/dashboard.md for the
  // trade-off: a key in a URL can end up in access logs and browser history).
  app.get<{ Querystring: { key?: string; after?: string } }>("/v1/events", async (req, reply) => {
    const key = req.query.key;
    if (req.headers.authorization === undefined && typeof key === "string" && key !== "") {
      req.headers.authorization = `Bearer ${key}`;
    }
    const tenant = await tenantOf(req, reply);
    if (tenant === null) return reply;
    const owner = options.streamOwner?.(req) ?? tenant;
    const refusal = stream.admit(owner);
    if (refusal) return send(reply, refusal);
    // fastify answers HEAD with this GET handler: a stream attached to a HEAD response
    // would never send its (bodiless) answer and hold the connection, so HEAD gets the
    // headers a stream would start with and ends.
    if (req.method === "HEAD") return reply.type(EVENT_STREAM_TYPE).send();
    const opened = await stream.open(tenant, owner, resumeFrom(req));
    if (typeof opened !== "function") return send(reply, opened);
    reply.hijack();
    opened(reply.raw);
    return reply;
  });
};

/**
 * Where a stream resumes: the `Last-Event-ID` header (what EventSource sends on reconnect)
 * wins over `?after=` (a client resuming from a cursor it kept, e.g. a `/v1/changes` page's).
 */
function resumeFrom(
  req: FastifyRequest<{ Querystring: { after?: unknown } }>,
): { cursor: string; field: string } | undefined {
  const last = req.headers["last-event-id"];
  if (typeof last === "string") return { cursor: last, field: "last-event-id" };
  const after = req.query.after;
  if (after === undefined) return undefined;
  return { cursor: typeof after === "string" ? after : String(after), field: "after" };
}
