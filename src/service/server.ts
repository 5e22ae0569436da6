import { maxHeaderSize } from "node:http";
import ipaddr from "ipaddr.js";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from "fastify";
import type { Scheduler } from "../api/scheduler.js";
import type { EventStreamOptions } from "../dashboard/events.js";
import { Described, InvalidOptionError } from "../core/errors.js";
import { MAX_KEY_LENGTH } from "../core/schedule-input.js";
import { acceptJsonBodiesOnly } from "../http/json-bodies.js";
import { clientErrorHandler, type ClientErrorLimits } from "../http/node-client-errors.js";
import {
  RAW_ANSWER_HEADERS,
  securityHeaders,
  validateCorsOrigins,
} from "../http/security-headers.js";
import { BearerGate, bearerAuth } from "./auth.js";
import { ApiError, installErrorHandlers, sendError } from "./http-errors.js";
import type { KeyStore } from "./keys.js";
import type { ServiceMetrics } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import { RateLimiter, type RateLimitOptions } from "./rate-limit.js";
import { ReadinessProbe } from "./readiness.js";
import { serializeRequest } from "./request-log.js";
import { dashboardRoutes } from "./routes/dashboard.js";
import { healthRoutes } from "./routes/health.js";
import { jobRoutes } from "./routes/jobs.js";
import { scheduleRoutes } from "./routes/schedules.js";
import { mcpRoutes, type McpHttpHandler } from "./routes/mcp.js";
import { statsRoutes } from "./routes/stats.js";
import { changesRoutes } from "./routes/changes.js";
import { operationRoutes } from "./routes/operations.js";
import { pauseRoutes } from "./routes/pauses.js";
import type { StorageHealth } from "./storage-health.js";

/** Options of the HTTP server (the fastify app; `startService` wires the rest). */
export interface ServerOptions {
  readonly scheduler: Scheduler;
  readonly keys: KeyStore;
  readonly metrics: ServiceMetrics;
  /** Accept webhook targets on private, loopback and link-local addresses. Default false. */
  readonly allowPrivateTargets?: boolean;
  /** Per-key rate limit. Default 100 requests/s, burst 200. */
  readonly rateLimit?: RateLimitOptions;
  /**
   * Failed authentications per client address; once spent, the address is refused 429
   * before its key is even looked at. Default 10/s, burst 100. `perSecond: 0` disables.
   */
  readonly authFailureLimit?: RateLimitOptions;
  /**
   * Proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client, so the
   * per-address limit counts clients, not the proxy. Default none: the peer is the client.
   */
  readonly trustProxy?: readonly string[];
  /** ms a client has to send a whole request, headers and body. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** ms a client has to send the request headers. Default 10000; at most requestTimeoutMs. */
  readonly headersTimeoutMs?: number;
  /** How long a /readyz probe of the store is reused, ms. Default 1000. */
  readonly readinessCacheMs?: number;
  /** Origins allowed to call the API from a browser (CORS). Default none: CORS off. */
  readonly corsOrigins?: readonly string[];
  /** Largest body of single-job requests, in bytes. Default 262144 (256 KiB). */
  readonly bodyLimit?: number;
  /** Largest body of a batch request, in bytes. Default 16777216 (16 MiB). */
  readonly batchBodyLimit?: number;
  /** The /mcp handler, or null (then /mcp answers 501). */
  readonly mcpHandler?: McpHttpHandler | null;
  /** fastify's logger option (a pino logger or its options). Default: off. */
  readonly logger?: FastifyServerOptions["loggerInstance"];
  /** Version reported by /openapi.json. */
  readonly version?: string;
  /** True once the server is shutting down (/readyz answers 503). */
  readonly isStopping?: () => boolean;
  /** Whether the store's storage ran full (/readyz answers 503 while it is). */
  readonly storage?: StorageHealth;
  /** `GET /v1/events` tuning: stream caps per key and in total, key re-check interval. */
  readonly events?: EventStreamOptions;
}

/** Builds the fastify app with every route; the caller listens and closes it. */
export async function buildServer(o: ServerOptions): Promise<FastifyInstance> {
  const bodyLimit = o.bodyLimit ?? 262_144;
  const limits = checkEdgeOptions(o);
  const app = Fastify({
    // The child's `req` serializer replaces fastify's: it redacts `?key=` (see request-log.ts).
    ...(o.logger
      ? { loggerInstance: o.logger.child({}, { serializers: { req: serializeRequest } }) }
      : { logger: false }),
    bodyLimit,
    // The default JSON parser refuses __proto__ and constructor.prototype keys (400).
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    // Requests that still arrive while closing are answered 503 below, in the one shape.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    // A slow client (a body that never ends, headers sent a byte at a time) is cut off; Node
    // checks its timers every connectionsCheckingInterval, so that follows the timeouts.
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(
        30_000,
        Math.max(50, Math.floor(limits.headersTimeoutMs / 4)),
      ),
    },
    ...(o.trustProxy && o.trustProxy.length > 0 ? { trustProxy: [...o.trustProxy] } : {}),
    // The longest path parameter is a job key (/v1/jobs/by-key/{key}, decoded length): at 200
    // a valid key of 201 to 256 characters answered 414 by key.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_KEY_LENGTH },
    // Requests Node's parser rejects never reach fastify: answered here in the one shape.
    clientErrorHandler: clientErrorHandler(limits, RAW_ANSWER_HEADERS, (err, fault) =>
      o.logger?.debug({ err, status: fault.status }, "request rejected by the HTTP parser"),
    ),
    // Errors the router raises before any route runs (an over-long path parameter, a bad
    // URL encoding): same error shape as the rest.
    frameworkErrors: (error, request, reply) => {
      const status = (error as { statusCode?: number }).statusCode ?? 400;
      void (reply as unknown as FastifyReply)
        .code(status >= 400 && status < 500 ? status : 400)
        .send(
          new ApiError(
            400,
            "bad-request",
            "path",
            "a well-formed path",
            request.url.slice(0, 80),
            error.message,
          ).body(),
        );
    },
  });
  await securityHeaders(app, o.corsOrigins ? { corsOrigins: o.corsOrigins } : {});
  answerWhileClosing(app);
  installErrorHandlers(app);
  acceptJsonBodiesOnly(app);

  const routes: string[] = [];
  app.addHook("onRoute", (r) => {
    for (const m of [r.method].flat()) if (m !== "HEAD") routes.push(`${m} ${r.url}`);
  });
  app.decorate("duetimeRoutes", routes);

  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    o.metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    o.metrics.httpSeconds.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  const gate = new BearerGate(
    o.keys,
    new RateLimiter(o.rateLimit),
    new RateLimiter({ perSecond: 10, burst: 100, ...o.authFailureLimit }),
  );
  const auth = bearerAuth(gate);
  const doc = openApiDocument(o.version ?? "0.0.0");
  const scheduler = o.scheduler;
  const readiness = new ReadinessProbe(
    async () => {
      // After a write refused for lack of space, one small write says whether space is back.
      await o.storage?.recheck(scheduler.now());
      await scheduler.get("00000000000000000000000000");
    },
    o.readinessCacheMs ?? 1000,
    () => scheduler.now(),
    (r) => o.metrics.observeReadiness(r.ready),
  );

  app.get("/openapi.json", async () => doc);
  healthRoutes(app, {
    readiness,
    metrics: o.metrics,
    isStopping: o.isStopping ?? (() => false),
    ...(o.storage ? { storage: o.storage } : {}),
  });
  mcpRoutes(app, o.mcpHandler ?? null, auth);
  await app.register(async (v1) => {
    v1.addHook("onRequest", auth);
    jobRoutes(v1, {
      scheduler: o.scheduler,
      allowPrivateTargets: o.allowPrivateTargets ?? false,
      bodyLimit,
      batchBodyLimit: o.batchBodyLimit ?? 16 * 1024 * 1024,
    });
    scheduleRoutes(v1, {
      scheduler: o.scheduler,
      allowPrivateTargets: o.allowPrivateTargets ?? false,
      bodyLimit,
    });
    statsRoutes(v1, o.scheduler);
    changesRoutes(v1, o.scheduler);
    operationRoutes(v1, { scheduler: o.scheduler, bodyLimit });
    pauseRoutes(v1, { scheduler: o.scheduler, bodyLimit });
  });
  // At the root, outside the scope of the bearer hook: the page loads without a key.
  await dashboardRoutes(app, {
    scheduler: o.scheduler,
    keys: o.keys,
    gate,
    ...(o.events ? { events: o.events } : {}),
  });
  return app;
}

/**
 * Checks the options of the service's edges (timeouts, CORS origins, trusted proxies) and
 * returns the request limits, with the header size limit they are reported with. Called by
 * startService before it opens anything, and again by buildServer.
 */
export function checkEdgeOptions(
  o: Pick<ServerOptions, "requestTimeoutMs" | "headersTimeoutMs" | "corsOrigins" | "trustProxy">,
): ClientErrorLimits {
  validateCorsOrigins(o.corsOrigins);
  for (const a of o.trustProxy ?? []) {
    if (typeof a !== "string" || !(ipaddr.isValid(a) || ipaddr.isValidCIDR(a))) {
      throw new InvalidOptionError("trustProxy", "IP addresses or CIDR ranges", a);
    }
  }
  const requestTimeoutMs = o.requestTimeoutMs ?? 30_000;
  const headersTimeoutMs = o.headersTimeoutMs ?? Math.min(10_000, requestTimeoutMs);
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs < 1) {
    throw new InvalidOptionError(
      "requestTimeoutMs",
      "a whole number of ms, 1 or more",
      requestTimeoutMs,
    );
  }
  if (
    !Number.isInteger(headersTimeoutMs) ||
    headersTimeoutMs < 1 ||
    headersTimeoutMs > requestTimeoutMs
  ) {
    throw new InvalidOptionError(
      "headersTimeoutMs",
      `a whole number of ms from 1 to requestTimeoutMs (${requestTimeoutMs})`,
      headersTimeoutMs,
    );
  }
  return { requestTimeoutMs, headersTimeoutMs, maxHeaderBytes: maxHeaderSize };
}

/** "METHOD /path" of every route the app registered (HEAD excluded). */
export function routesOf(app: FastifyInstance): string[] {
  return [...((app as unknown as { duetimeRoutes: string[] }).duetimeRoutes ?? [])];
}

/**
 * While the server closes, a request that still arrives on a connection that was busy
 * (pipelined, or sent on a keep-alive connection mid-drain) is answered 503 at once, as
 * fastify's return503OnClosing would, but in the one error shape; fastify has already set
 * `Connection: close` on it. Requests already past this hook finish normally.
 */
function answerWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onRequest", async (_request, reply) => {
    if (!closing) return;
    return sendError(
      reply,
      new ApiError(
        503,
        "unavailable",
        "request",
        "a server that is not shutting down",
        new Described("a request during shutdown"),
        "the server is shutting down: retry on another instance or after it restarts",
      ),
    );
  });
}
