import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Described, DuetimeError, InvalidJobError } from "../core/errors.js";
import { errorAnswer, type Answer } from "./answers.js";

/** Sends an answer; data answers are never cached (they are per tenant and change). */
export function send(reply: FastifyReply, a: Answer): FastifyReply {
  return reply.code(a.status).header("cache-control", "no-store").send(a.body);
}

/**
 * Errors of the dashboard's routes in the API's shape: bad input 400 naming the field,
 * fastify's own client errors (bad JSON, too large) with their status, anything else a 500
 * that is logged and says nothing more.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof InvalidJobError) return send(reply, errorAnswer(400, "invalid", err));
    if (err instanceof DuetimeError) {
      const e = { field: "", expected: "", received: undefined, message: err.message };
      return send(reply, errorAnswer(400, "invalid", e));
    }
    if (typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500) {
      const e = {
        field: "body",
        expected: "a valid request",
        received: undefined,
        message: err.message,
      };
      return send(reply, errorAnswer(err.statusCode, "bad-request", e));
    }
    req.log.error({ err }, "dashboard request failed");
    const e = { field: "", expected: "", received: undefined, message: "internal error" };
    return send(reply, errorAnswer(500, "internal", e));
  });
}

/** `tenantOf(req, reply)`: the request's tenant, or null after answering 401. */
export function tenantResolver(authenticate: (req: FastifyRequest) => Promise<string | null>) {
  return async function tenantOf(req: FastifyRequest, reply: FastifyReply): Promise<string | null> {
    const tenant = await authenticate(req);
    if (tenant === null) {
      const header = req.headers.authorization;
      void reply.header("www-authenticate", 'Bearer realm="duetime"');
      send(
        reply,
        errorAnswer(401, "unauthorized", {
          field: "authorization",
          expected: "a valid API key as 'Authorization: Bearer <key>'",
          received: new Described(
            header === undefined ? "no Authorization header" : "an unknown or revoked key",
          ),
          message: "unauthorized: a valid API key as 'Authorization: Bearer <key>' is needed",
        }),
      );
    }
    return tenant;
  };
}
