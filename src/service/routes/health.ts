import type { FastifyInstance } from "fastify";
import type { ServiceMetrics } from "../metrics.js";
import type { ReadinessProbe } from "../readiness.js";
import type { StorageHealth } from "../storage-health.js";

/**
 * Unauthenticated operational routes: /healthz (the process answers), /readyz (the store
 * answered a point read within the probe's cache time, its storage is not full, and the
 * server is not shutting down) and /metrics (Prometheus).
 */
export function healthRoutes(
  app: FastifyInstance,
  o: {
    readiness: ReadinessProbe;
    metrics: ServiceMetrics;
    isStopping: () => boolean;
    storage?: StorageHealth;
  },
): void {
  app.get("/healthz", async () => ({ status: "ok" }));

  app.get("/readyz", async (_request, reply) => {
    if (o.isStopping()) return reply.code(503).send({ status: "stopping" });
    const r = await o.readiness.check();
    // A store that answers reads but refuses writes for lack of space is not ready (the
    // probe above has just tried a write if it was full).
    const full = o.storage?.problem();
    if (full) return reply.code(503).send({ status: "unavailable", error: full });
    if (r.ready) return { status: "ready" };
    return reply.code(503).send({ status: "unavailable", error: r.error });
  });

  app.get("/metrics", async (_request, reply) => {
    const text = await o.metrics.registry.metrics();
    return reply.header("content-type", o.metrics.registry.contentType).send(text);
  });
}
