import type { FastifyInstance } from "fastify";
import type { ServiceMetrics } from "../metrics.js";
import type { ReadinessProbe } from "../readiness.js";

/**
 * Unauthenticated operational routes: /healthz (the process answers), /readyz (the store
 * answered a point read within the probe's cache time, and the server is not shutting
 * down) and /metrics (Prometheus).
 */
export function healthRoutes(
  app: FastifyInstance,
  o: { readiness: ReadinessProbe; metrics: ServiceMetrics; isStopping: () => boolean },
): void {
  app.get("/healthz", async () => ({ status: "ok" }));

  app.get("/readyz", async (_request, reply) => {
    if (o.isStopping()) return reply.code(503).send({ status: "stopping" });
    const r = await o.readiness.check();
    if (r.ready) return { status: "ready" };
    return reply.code(503).send({ status: "unavailable", error: r.error });
  });

  app.get("/metrics", async (_request, reply) => {
    const text = await o.metrics.registry.metrics();
    return reply.header("content-type", o.metrics.registry.contentType).send(text);
  });
}
