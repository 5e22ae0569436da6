import type { FastifyReply, FastifyRequest } from "fastify";
import { Described } from "../core/errors.js";
import { ApiError, sendError } from "./http-errors.js";
import ipaddr from "ipaddr.js";
import { authenticateKey, isWellFormedKey, type KeyStore } from "./keys.js";
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

/** Presented keys remembered as refused; past this many the oldest is forgotten. */
const REFUSED_KEYS_KEPT = 10_000;

/** The outcome of a bearer check: the key's tenant and id, or the error to answer. */
export type BearerCheck =
  | { readonly ok: true; readonly tenant: string; readonly keyId: string }
  | { readonly ok: false; readonly error: ApiError };

/**
 * The one key check behind the bearer hook (/v1, /mcp) and the dashboard's `authenticate`,
 * so both answer alike: 401 for a missing, bad or revoked key (the answer never says which
 * key exists); 429 with Retry-After past the key's rate or past the client address's budget
 * of failed attempts.
 *
 * A failed attempt must cost less than a good one, or guessing keys is a cheap way to load
 * the store. So, in this order: a client address that has spent its budget of failures is
 * refused before anything else (no hash, no store read); a key this process already found
 * unknown or revoked is refused from memory (keys are random and revocation is final, so a
 * refusal never turns into an acceptance); only then is the key hashed and looked up. Every
 * failure takes a token of its address. Successful requests spend only their key's tokens,
 * so clients sharing an address (behind a NAT) are not throttled by each other's traffic,
 * only by each other's failures.
 */
export class BearerGate {
  private readonly refused = new Map<string, true>();

  constructor(
    private readonly keys: KeyStore,
    /** Requests per key. */
    private readonly perKey: RateLimiter,
    /** Failed authentications per client address. */
    private readonly failuresPerAddress: RateLimiter,
  ) {}

  /** Refused keys remembered now (at most 10,000). */
  get rememberedRefusals(): number {
    return this.refused.size;
  }

  async check(header: string | undefined, clientAddress: string): Promise<BearerCheck> {
    const address = addressBudgetName(clientAddress);
    const blockedMs = this.failuresPerAddress.peek(address);
    if (blockedMs > 0) {
      const l = this.failuresPerAddress;
      return tooMany(
        blockedMs,
        `at most ${l.perSecond} failed authentications per second per client address (burst ${l.burst})`,
        "too many failed authentications from this address",
      );
    }
    const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    const key = m?.[1];
    if (key === undefined) {
      return this.failure(
        address,
        header === undefined ? "no Authorization header" : "a header that is not 'Bearer <key>'",
      );
    }
    const found = this.refused.has(key) ? null : await authenticateKey(this.keys, key);
    if (!found) {
      this.remember(key);
      return this.failure(address, "an unknown or revoked key");
    }
    const waitMs = this.perKey.take(found.id);
    if (waitMs > 0) {
      const l = this.perKey;
      return tooMany(
        waitMs,
        `at most ${l.perSecond} requests per second per key (burst ${l.burst})`,
        "rate limited",
      );
    }
    return { ok: true, tenant: found.tenant, keyId: found.id };
  }

  private failure(address: string, received: string): BearerCheck {
    this.failuresPerAddress.take(address);
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

  /** Only keys that could exist: any other is refused without a store read anyway. */
  private remember(key: string): void {
    if (!isWellFormedKey(key)) return;
    if (this.refused.size >= REFUSED_KEYS_KEPT) {
      const oldest = this.refused.keys().next();
      if (!oldest.done) this.refused.delete(oldest.value);
    }
    this.refused.set(key, true);
  }
}

/**
 * The name an address's failure budget is kept under: an IPv4 address (an IPv4-mapped IPv6
 * one included) as is, an IPv6 address by its /64, the block one host is usually given, so
 * a client cannot buy a fresh budget per address of its own network.
 */
export function addressBudgetName(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(":")}::/64`;
}

function tooMany(waitMs: number, expected: string, what: string): BearerCheck {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return {
    ok: false,
    error: new ApiError(
      429,
      "rate-limited",
      "authorization",
      expected,
      new Described("more"),
      `${what}: retry after ${seconds} s`,
      {},
      { "retry-after": String(seconds) },
    ),
  };
}

/**
 * The bearer hook of every authenticated route: runs on request, before the body is read,
 * so an unauthenticated or rate-limited caller costs no parsing. The client address is
 * fastify's `request.ip` (the peer, or the forwarded client behind a trusted proxy).
 */
export function bearerAuth(gate: BearerGate) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const r = await gate.check(request.headers.authorization, request.ip);
    if (!r.ok) {
      sendError(reply, r.error);
      return reply;
    }
    request.tenant = r.tenant;
    request.apiKeyId = r.keyId;
  };
}
