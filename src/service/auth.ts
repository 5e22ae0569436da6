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

/** The outcome of a bearer check: the key's tenant and id, or the error to answer. */
export type BearerCheck =
  | { readonly ok: true; readonly tenant: string; readonly keyId: string }
  | { readonly ok: false; readonly error: ApiError };

/**
 * Checks an `Authorization` header and takes one token of the key's rate limit. 401 for a
 * missing, bad or revoked key (the answer never says which key exists); 429 with
 * Retry-After past the rate. The one check behind the bearer hook and the dashboard's
 * `authenticate`, so both answer alike.
 */
export async function checkBearer(
  keys: KeyStore,
  limiter: RateLimiter,
  header: string | undefined,
): Promise<BearerCheck> {
  const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  const found = m ? await authenticateKey(keys, m[1]!) : null;
  if (!found) {
    const received =
      header === undefined
        ? "no Authorization header"
        : m
          ? "an unknown or revoked key"
          : "a header that is not 'Bearer <key>'";
    return {
      ok: false,
      error: new ApiError(
        401,
        "unauthorized",
        "authorization",
        EXPECTED,
        new Described(received),
        "unauthorized: " + EXPECTED,
        {},
        { "www-authenticate": 'Bearer realm="duetime"' },
      ),
    };
  }
  const waitMs = limiter.take(found.id);
  if (waitMs > 0) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return {
      ok: false,
      error: new ApiError(
        429,
        "rate-limited",
        "authorization",
        `at most ${limiter.perSecond} requests per second per key (burst ${limiter.burst})`,
        new Described("more"),
        `rate limited: retry after ${seconds} s`,
        {},
        { "retry-after": String(seconds) },
      ),
    };
  }
  return { ok: true, tenant: found.tenant, keyId: found.id };
}

/**
 * The bearer hook of every authenticated route: runs on request, before the body is read,
 * so an unauthenticated or rate-limited caller costs no parsing.
 */
export function bearerAuth(keys: KeyStore, limiter: RateLimiter) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const r = await checkBearer(keys, limiter, request.headers.authorization);
    if (!r.ok) {
      sendError(reply, r.error);
      return reply;
    }
    request.tenant = r.tenant;
    request.apiKeyId = r.keyId;
  };
}
