import type { FastifyReply, FastifyRequest } from "fastify";
import { Described } from "../core/errors.js";
import { ApiError, sendError } from "./http-errors.js";
import { authenticateKey, type KeyStore } from "./keys.js";
import type { RateLimiter } from "./rate-limit.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Tenant of the request's API key (set by the bearer hook on /v1 and /mcp). */
    tenant: string;
    /** Id of the request's API key. */
    apiKeyId: string;
  }
}

const EXPECTED = "a valid API key as 'Authorization: Bearer <key>'";

/**
 * The bearer hook of every authenticated route: runs on request, before the body is read,
 * so an unauthenticated or rate-limited caller costs no parsing. 401 for a missing, bad or
 * revoked key (the answer never says which key exists); 429 with Retry-After past the rate.
 */
export function bearerAuth(keys: KeyStore, limiter: RateLimiter) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const header = request.headers.authorization;
    const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    const found = m ? await authenticateKey(keys, m[1]!) : null;
    if (!found) {
      void reply.header("www-authenticate", 'Bearer realm="duetime"');
      sendError(
        reply,
        new ApiError(
          401,
          "unauthorized",
          "authorization",
          EXPECTED,
          new Described(
            header === undefined
              ? "no Authorization header"
              : m
                ? "an unknown or revoked key"
                : "a header that is not 'Bearer <key>'",
          ),
          "unauthorized: " + EXPECTED,
        ),
      );
      return reply;
    }
    const waitMs = limiter.take(found.id);
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      sendError(
        reply,
        new ApiError(
          429,
          "rate-limited",
          "authorization",
          `at most ${limiter.perSecond} requests per second per key (burst ${limiter.burst})`,
          new Described("more"),
          `rate limited: retry after ${seconds} s`,
          {},
          { "retry-after": String(seconds) },
        ),
      );
      return reply;
    }
    request.tenant = found.tenant;
    request.apiKeyId = found.id;
  };
}
