import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Described, DuetimeError, InvalidJobError } from "../core/errors.js";
import { fastifyClientFault } from "../http/fastify-errors.js";
import { libraryFault } from "../http/library-faults.js";
import { errorAnswer, type Answer } from "./answers.js";
import { storageFullFault } from "../http/storage-full.js";

/** Sends an answer; data answers are never cached (they are per tenant and change). */
export function send(reply: FastifyReply, a: Answer): FastifyReply {
  for (const [name, value] of Object.entries(a.headers ?? {})) void reply.header(name, value);
  return reply.code(a.status).header("cache-control", "no-store").send(a.body);
}

/**
 * What `authenticate` resolves a request to: its tenant; null when the key is missing or
 * unknown (answered 401 here); or an answer of the host's own to send instead (the
 * service's 429 with Retry-After once a key passes its rate limit, or its own 401).
 */
export type AuthResult = string | null | Answer;

/**
 * Errors of the dashboard's routes in the API's shape: bad input 400 naming the field, the
 * library's other typed refusals as the API answers them (a quota 429, a missing pause 404),
 * fastify's own client errors (bad JSON, too large, wrong media type) read exactly as the
 * API reads them (one classifier, src/http/fastify-errors.ts), anything else a 500 that is
 * logged and says nothing more.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const full = storageFullFault(err);
    if (full) {
      req.log.error({ err }, "storage full: the write was refused");
      return send(reply, { ...errorAnswer(full.status, full.code, full), headers: full.headers });
    }
    if (err instanceof InvalidJobError) return send(reply, errorAnswer(400, "invalid", err));
    const known = libraryFault(err);
    if (known) {
      return send(reply, {
        ...errorAnswer(known.status, known.code, known, known.extra),
        headers: known.headers,
      });
    }
    if (err instanceof DuetimeError) {
      const e = { field: "", expected: "", received: undefined, message: err.message };
      return send(reply, errorAnswer(400, "invalid", e));
    }
    const fault = fastifyClientFault(err, req);
    if (fault) return send(reply, errorAnswer(fault.status, fault.code, fault));
    req.log.error({ err }, "dashboard request failed");
    const e = { field: "", expected: "", received: undefined, message: "internal error" };
    return send(reply, errorAnswer(500, "internal", e));
  });
}

/**
 * `tenantOf(req, reply)`: the request's tenant, or null after answering: 401 when
 * `authenticate` found no tenant, its refusal as is when it gave one.
 */
export function tenantResolver(authenticate: (req: FastifyRequest) => Promise<AuthResult>) {
  return async function tenantOf(req: FastifyRequest, reply: FastifyReply): Promise<string | null> {
    const result = await authenticate(req);
    if (typeof result === "string") return result;
    if (result !== null) {
      // A 2xx or 3xx "refusal" would tell the client its request was served.
      if (!Number.isInteger(result.status) || result.status < 400 || result.status > 599) {
        throw new Error(`authenticate refused with status ${result.status}: expected 4xx or 5xx`);
      }
      send(reply, result);
      return null;
    }
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
    return null;
  };
}
