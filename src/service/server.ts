import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from "fastify";
import type { Scheduler } from "../api/scheduler.js";
import type { EventStreamOptions } from "../dashboard/events.js";
import { bearerAuth } from "./auth.js";
import { ApiError, installErrorHandlers } from "./http-errors.js";
import type { KeyStore } from "./keys.js";
import type { ServiceMetrics } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import { RateLimiter, type RateLimitOptions } from "./rate-limit.js";
import { serializeRequest } from "./request-log.js";
import { dashboardRoutes } from "./routes/dashboard.js";
import { healthRoutes } from "./routes/health.js";
import { jobRoutes } from "./routes/jobs.js";
import { mcpRoutes, type McpHttpHandler } from "./routes/mcp.js";
import { statsRoutes } from "./routes/stats.js";

/** Options of the HTTP server (the fastify app; `startService` wires the rest). */
export interface ServerOptions {
  readonly scheduler: Scheduler;
  readonly keys: KeyStore;
  readonly metrics: ServiceMetrics;
  /** Accept webhook targets on private, loopback and link-local addresses. Default false. */
  readonly allowPrivateTargets?: boolean;
  /** Per-key rate limit. Default 100 requests/s, burst 200. */
  readonly rateLimit?: RateLimitOptions;
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
  /** `GET /v1/events` tuning: stream caps per key and in total, key re-check interval. */
  readonly events?: EventStreamOptions;
}

/** Builds the fastify app with every route; the caller listens and closes it. */
export async function buildServer(o: ServerOptions): Promise<FastifyInstance> {
  const bodyLimit = o.bodyLimit ?? 262_144;
  const app = Fastify({
    // The child's `req` serializer replaces fastify's: it redacts `?key=` (see request-log.ts).
    ...(o.logger
      ? { loggerInstance: o.logger.child({}, { serializers: { req: serializeRequest } }) }
      : { logger: false }),
    bodyLimit,
    // The default JSON parser refuses __proto__ and constructor.prototype keys (400).
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    return503OnClosing: true,
    forceCloseConnections: "idle",
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
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
  installErrorHandlers(app);
  // An empty body with Content-Type: application/json (some clients send that for bodiless
  // POSTs such as cancel) is no body, not a parse error.
  const defaultJson = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (body === "" || (typeof body === "string" && body.trim() === "")) {
      done(null, undefined);
      return;
    }
    defaultJson(request, body as string, done);
  });

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

  const limiter = new RateLimiter(o.rateLimit);
  const auth = bearerAuth(o.keys, limiter);
  const doc = openApiDocument(o.version ?? "0.0.0");

  app.get("/openapi.json", async () => doc);
  healthRoutes(app, {
    scheduler: o.scheduler,
    metrics: o.metrics,
    isStopping: o.isStopping ?? (() => false),
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
    statsRoutes(v1, o.scheduler);
  });
  // At the root, outside the scope of the bearer hook: the page loads without a key.
  await dashboardRoutes(app, {
    scheduler: o.scheduler,
    keys: o.keys,
    limiter,
    ...(o.events ? { events: o.events } : {}),
  });
  return app;
}

/** "METHOD /path" of every route the app registered (HEAD excluded). */
export function routesOf(app: FastifyInstance): string[] {
  return [...((app as unknown as { duetimeRoutes: string[] }).duetimeRoutes ?? [])];
}
