import type { FastifyInstance } from "fastify";
import { operationView } from "../../api/operation-view.js";
import type { OperationState, Scheduler } from "../../api/scheduler.js";
import { OperationNotFoundError } from "../../core/errors.js";
import { rejectUnknownFields, requireObject } from "../../core/validate.js";
import { ApiError } from "../http-errors.js";

/**
 * Bulk operations for the request's tenant (docs/managing-jobs.md): POST /v1/operations
 * starts one (202 with its record; a count done at once answers 200, and so does a start
 * whose key an operation holds: that one, created false; 409 for another request under the
 * key, from the error handler), GET reads one or a
 * page, POST .../cancel stops one after its batch in flight. Each is one Scheduler call;
 * the body's validation is the library's (errors name the field).
 */
export function operationRoutes(
  app: FastifyInstance,
  o: { scheduler: Scheduler; bodyLimit: number },
): void {
  const s = o.scheduler;
  app.post("/v1/operations", { bodyLimit: o.bodyLimit }, async (request, reply) => {
    const { operation: op, created } = await s.startOperation(request.body as never, {
      tenant: request.tenant,
    });
    const done = op.state !== "queued" && op.state !== "running";
    // a retried start (its key held) started nothing: 200 with the first one, as a job's key
    const status = created && !done ? 202 : 200;
    return reply.code(status).send({ operation: operationView(op), created });
  });
  app.get("/v1/operations", async (request) => {
    const q = requireObject(request.query ?? {}, "query");
    rejectUnknownFields(q, ["state", "cursor", "limit"], "");
    const page = await s.listOperations({
      tenant: request.tenant,
      ...(q.state === undefined ? {} : { state: q.state as OperationState }),
      ...(q.cursor === undefined ? {} : { cursor: q.cursor as string }),
      ...(q.limit === undefined ? {} : { limit: integer(q.limit) as number }),
    });
    return { operations: page.operations.map(operationView), nextCursor: page.nextCursor };
  });
  app.get<{ Params: { id: string } }>("/v1/operations/:id", async (request) => {
    const op = await s.getOperation(request.params.id, { tenant: request.tenant });
    if (!op) throw operationNotFound(request.params.id);
    return { operation: operationView(op) };
  });
  app.post<{ Params: { id: string } }>("/v1/operations/:id/cancel", async (request) => {
    try {
      const op = await s.cancelOperation(request.params.id, { tenant: request.tenant });
      return { operation: operationView(op) };
    } catch (err) {
      if (err instanceof OperationNotFoundError) throw operationNotFound(err.id);
      throw err;
    }
  });
}

/** A query integer as the library validates it ("abc" stays a string it refuses). */
function integer(v: unknown): unknown {
  return typeof v === "string" && /^\d{1,6}$/.test(v) ? Number(v) : v;
}

/** A missing operation and another tenant's read the same. */
function operationNotFound(id: string): ApiError {
  return new ApiError(
    404,
    "not-found",
    "id",
    "the id of one of your operations",
    id,
    `operation ${id} not found`,
  );
}
