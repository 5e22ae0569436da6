import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { Scheduler } from "../api/scheduler.js";
import { describeDbLocation } from "../core/db-location.js";
import type { Clock } from "../core/clock.js";
import type { EventStreamOptions } from "../dashboard/events.js";
import { InfrastructureError } from "../engine/handler-errors.js";
import type { SchedulerOptions } from "../engine/options.js";
import { openStore } from "../stores/open-store.js";
import { newSigningSecret, openKeyStore, type KeyStore } from "./keys.js";
import { ServiceMetrics, observeClaims } from "./metrics.js";
import { StorageHealth } from "./storage-health.js";
import type { RateLimitOptions } from "./rate-limit.js";
import { tenantQuotas, type TenantQuotaOptions } from "./quota.js";
import { mountMcpHandler } from "./routes/mcp.js";
import { buildServer, checkEdgeOptions } from "./server.js";
import { createWebhookDelivery } from "./webhook/deliver.js";

/** Options of `startService` (what `duetime serve` passes). */
export interface ServiceOptions {
  /** SQLite file path or postgres:// URL. Required. */
  readonly db: string;
  /** TCP port; 0 picks a free one. Default 8080. */
  readonly port?: number;
  /** Interface to listen on. Default 127.0.0.1. */
  readonly host?: string;
  /** Accept and deliver to private, loopback and link-local webhook targets. Default false. */
  readonly allowPrivateTargets?: boolean;
  /** Per-attempt webhook timeout in ms (from when the request is sent). Default 10000. */
  readonly webhookTimeoutMs?: number;
  /** Open webhook connections per origin, all tenants together. Default 64. */
  readonly webhookConnectionsPerOrigin?: number;
  /** Webhook deliveries one tenant runs at once to one origin. Default webhookConnectionsPerOrigin. */
  readonly webhookConcurrencyPerOrigin?: number;
  /** Per-key rate limit. Default 100 requests/s, burst 200. */
  readonly rateLimit?: RateLimitOptions;
  /** Failed authentications per client address. Default 10/s, burst 100. 0 disables. */
  readonly authFailureLimit?: RateLimitOptions;
  /** Proxies (addresses, CIDR ranges) whose X-Forwarded-For is believed. Default none. */
  readonly trustProxy?: readonly string[];
  /** ms a client has to send a whole request. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** ms a client has to send the request headers. Default 10000 (at most requestTimeoutMs). */
  readonly headersTimeoutMs?: number;
  /** How long a /readyz probe of the store is reused, ms. Default 1000. */
  readonly readinessCacheMs?: number;
  /**
   * SQLite: bytes of the disk reserve kept beside the database, released when the disk
   * fills up so stored jobs keep firing while creates answer 507 (see docs/reliability.md).
   * Default 0 (none); `duetime serve` passes 16 MiB (`--ballast-mib`).
   */
  readonly ballastBytes?: number;
  /** Origins allowed to call the API from a browser (CORS). Default none: CORS off. */
  readonly corsOrigins?: readonly string[];
  /** Per-tenant quotas (live jobs, creates per second), answered 429 with Retry-After. Default none. */
  readonly quotas?: TenantQuotaOptions;
  /** Largest single-job request body, bytes. Default 262144. */
  readonly bodyLimit?: number;
  /** Largest batch request body, bytes. Default 16777216. */
  readonly batchBodyLimit?: number;
  /** How long a tenant's signing secret is cached for deliveries, ms. Default 5000. */
  readonly secretCacheMs?: number;
  /** How long a stop waits for running deliveries, ms. Default 15000. */
  readonly stopTimeoutMs?: number;
  /** Scheduler options (concurrency, backoff...). `maxPastMs` defaults to 60000 here. */
  readonly scheduler?: Omit<SchedulerOptions, "store" | "clock" | "logger">;
  /** Clock of the scheduler (tests pass a ManualClock). Default the system clock. */
  readonly clock?: Clock;
  /** pino log level. Default "info" (DUETIME_LOG_LEVEL overrides). "silent" for none. */
  readonly logLevel?: string;
  /** Where logs go. Default stderr. */
  readonly logDestination?: NodeJS.WritableStream;
  /** Version reported by /openapi.json. */
  readonly version?: string;
  /** Mount /mcp (the MCP server over HTTP). Default true; false answers /mcp with 501. */
  readonly mcp?: boolean;
  /** `GET /v1/events` tuning (docs/dashboard.md): stream caps, key re-check interval. */
  readonly events?: EventStreamOptions;
}

export interface RunningService {
  /** Base URL, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly app: FastifyInstance;
  readonly scheduler: Scheduler;
  readonly keys: KeyStore;
  readonly metrics: ServiceMetrics;
  /**
   * Graceful stop: /readyz turns 503 and, at once, the scheduler starts nothing new and
   * hands back unstarted claims while the HTTP server stops accepting and finishes its
   * requests; the scheduler waits for running deliveries (up to stopTimeoutMs), then
   * everything closes.
   */
  close(): Promise<void>;
}

/** Opens the database, starts firing, and listens. */
export async function startService(o: ServiceOptions): Promise<RunningService> {
  checkEdgeOptions(o);
  const logger = pino(
    { name: "duetime", level: process.env.DUETIME_LOG_LEVEL ?? o.logLevel ?? "info" },
    o.logDestination ?? pino.destination(2),
  );
  const metrics = new ServiceMetrics();
  // Writes refused for lack of space: 507 answers (http-errors.ts), /readyz, metrics.
  const storage = new StorageHealth();
  storage.register(metrics.registry);
  const store = storage.watch(
    observeClaims(
      await openStore(o.db, o.ballastBytes === undefined ? {} : { ballastBytes: o.ballastBytes }),
      (n) => metrics.observeClaim(n),
    ),
  );
  let keys: KeyStore;
  try {
    keys = await openKeyStore(o.db);
  } catch (err) {
    await store.close();
    throw err;
  }
  const admit = tenantQuotas(o.quotas ?? {}, (tenant) => store.jobsCountByStatus({ tenant }));
  const scheduler = new Scheduler({
    maxPastMs: 60_000,
    ...o.scheduler,
    ...(admit ? { admit } : {}),
    store,
    logger,
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const webhook = createWebhookDelivery({
    secretFor: cachedSecrets(keys, o.secretCacheMs ?? 5000),
    allowPrivateTargets: o.allowPrivateTargets ?? false,
    ...(o.webhookTimeoutMs === undefined ? {} : { timeoutMs: o.webhookTimeoutMs }),
    ...(o.webhookConnectionsPerOrigin === undefined
      ? {}
      : { connectionsPerOrigin: o.webhookConnectionsPerOrigin }),
    ...(o.webhookConcurrencyPerOrigin === undefined
      ? {}
      : { concurrencyPerOrigin: o.webhookConcurrencyPerOrigin }),
    onAttempt: (a) => metrics.observeDelivery(a),
    logger: logger.child({ component: "webhook" }),
  });
  scheduler.handleOther(webhook.handler, { fairShare: webhook.fairShare });
  metrics.watch(scheduler);
  let stopping = false;
  // Built inside the try: an option buildServer or the MCP server refuses must not leave the
  // store open.
  const build = (): Promise<FastifyInstance> =>
    buildServer({
      scheduler,
      keys,
      metrics,
      logger: logger.child({ component: "http" }),
      mcpHandler:
        o.mcp === false
          ? null
          : mountMcpHandler({
              scheduler,
              allowPrivateTargets: o.allowPrivateTargets ?? false,
              ...(o.version === undefined ? {} : { version: o.version }),
            }),
      isStopping: () => stopping,
      storage,
      ...(o.allowPrivateTargets === undefined
        ? {}
        : { allowPrivateTargets: o.allowPrivateTargets }),
      ...(o.rateLimit === undefined ? {} : { rateLimit: o.rateLimit }),
      ...(o.authFailureLimit === undefined ? {} : { authFailureLimit: o.authFailureLimit }),
      ...(o.trustProxy === undefined ? {} : { trustProxy: o.trustProxy }),
      ...(o.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: o.requestTimeoutMs }),
      ...(o.headersTimeoutMs === undefined ? {} : { headersTimeoutMs: o.headersTimeoutMs }),
      ...(o.readinessCacheMs === undefined ? {} : { readinessCacheMs: o.readinessCacheMs }),
      ...(o.corsOrigins === undefined ? {} : { corsOrigins: o.corsOrigins }),
      ...(o.bodyLimit === undefined ? {} : { bodyLimit: o.bodyLimit }),
      ...(o.batchBodyLimit === undefined ? {} : { batchBodyLimit: o.batchBodyLimit }),
      ...(o.version === undefined ? {} : { version: o.version }),
      ...(o.events === undefined ? {} : { events: o.events }),
    });
  let built: FastifyInstance | null = null;
  try {
    built = await build();
    await built.listen({ port: o.port ?? 8080, host: o.host ?? "127.0.0.1" });
  } catch (err) {
    await Promise.allSettled([built?.close(), webhook.close(), keys.close(), store.close()]);
    throw err;
  }
  const app = built;
  scheduler.start();
  const address = app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info(
    { url, db: describeDbLocation(o.db), allowPrivateTargets: o.allowPrivateTargets ?? false },
    "serving",
  );

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopping = true;
      // The scheduler stops starting deliveries now, not once the last HTTP request is done;
      // the store closes only after both (those requests may still be using it).
      // Every step runs whatever an earlier one did; failures are thrown at the end.
      const steps = await Promise.allSettled([
        app.close(),
        scheduler.stop({ timeoutMs: o.stopTimeoutMs ?? 15_000 }),
      ]);
      storage.stop();
      steps.push(...(await Promise.allSettled([scheduler.close()])));
      await Promise.allSettled([webhook.close(), keys.close()]);
      const failed = steps.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
      if (failed.length > 0) logger.error({ err: failed[0] }, "stopped, with errors");
      else logger.info({}, "stopped");
      logger.flush?.();
      if (failed.length === 1) throw failed[0];
      if (failed.length > 1) throw new AggregateError(failed, "closing the service");
    })();
    return closing;
  };
  return { url, app, scheduler, keys, metrics, close };
}

/**
 * Tenant signing secrets for deliveries, cached for `ttlMs` so a burst of deliveries does
 * not read the key store once per webhook; a rotated secret is used within `ttlMs`.
 */
function cachedSecrets(keys: KeyStore, ttlMs: number): (tenant: string) => Promise<string> {
  const cache = new Map<string, { secret: Promise<string>; until: number }>();
  return (tenant) => {
    const now = Date.now();
    const hit = cache.get(tenant);
    if (hit && hit.until > now) return hit.secret;
    if (cache.size > 10_000) cache.clear();
    const secret = keys
      .tenantSecretEnsure({ tenant, secret: newSigningSecret(), now })
      .catch((err: unknown) => {
        throw new InfrastructureError(
          `signing secret unavailable: database error${codeSuffix(err)} (details in the server log)`,
          { cause: err },
        );
      });
    cache.set(tenant, { secret, until: now + ttlMs });
    secret.catch(() => cache.delete(tenant));
    return secret;
  };
}

/**
 * " (ECONNREFUSED)": the first error code along the cause chain, which says what kind of
 * failure it was without the address or credentials its message may carry.
 */
function codeSuffix(err: unknown): string {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Z0-9_]{1,32}$/.test(code)) return ` (${code})`;
    e = e.cause ?? (e instanceof AggregateError ? e.errors[0] : undefined);
  }
  return "";
}
