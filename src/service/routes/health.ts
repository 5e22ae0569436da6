import type { FastifyInstance } from "fastify";
import type { Scheduler } from "../../api/scheduler.js";
import type { ServiceMetrics } from "../metrics.js";

/**
 * Unauthenticated operational routes: /healthz (the process answers), /readyz (the store
 * answers a point read and the server is not shutting down) and /metrics (Prometheus).
 */
export function healthRoutes(
  app: FastifyInstance,
  o: { scheduler: Scheduler; metrics: ServiceMetrics; isStopping: () => boolean },
): void {
  app.get("/healthz", async () => ({ status: "ok" }));

  app.get("/readyz", async (_request, reply) => {
    if (o.isStopping()) return reply.code(503).send({ status: "stopping" });
    try {
      await o.scheduler.get("00000000000000000000000000");
      return { status: "ready" };
    } catch (err) {
      return reply
        .code(503)
        .send({ status: "unavailable", error: err instanceof Error ? err.message : String(err) });
    }
  });

  app.get("/metrics", async (_request, reply) => {
    const text = await o.metrics.registry.metrics();
    return reply.header("content-type", o.metrics.registry.contentType).send(text);
  });
}
