import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Scheduler } from "../../api/scheduler.js";
import type { EventStreamOptions } from "../../dashboard/events.js";
import { dashboardPlugin, type AuthResult } from "../../dashboard/plugin.js";
import type { BearerGate } from "../auth.js";
import type { KeyStore } from "../keys.js";

export interface DashboardRoutesOptions {
  readonly scheduler: Scheduler;
  /** Where streams' keys are re-checked (revocation ends them). */
  readonly keys: KeyStore;
  /** The service's key check: dashboard requests spend the same tokens as /v1. */
  readonly gate: BearerGate;
  /** Live stream tuning: caps per key and in total, the key re-check interval... */
  readonly events?: EventStreamOptions;
}

/**
 * The web dashboard at the root, beside (not inside) the /v1 scope whose bearer hook would
 * lock the page itself: `/` and `/assets/*` load without a key, and the plugin checks the
 * key of each of its /v1 routes through `authenticate`, which answers exactly as the bearer
 * hook does (401, or 429 with Retry-After past the key's rate).
 */
export async function dashboardRoutes(
  app: FastifyInstance,
  o: DashboardRoutesOptions,
): Promise<void> {
  const authenticate = async (req: FastifyRequest): Promise<AuthResult> => {
    // On /v1/events the plugin has already copied a `?key=` query into this header.
    const r = await o.gate.check(req.headers.authorization, req.ip);
    if (!r.ok) return { status: r.error.status, body: r.error.body(), headers: r.error.headers };
    req.tenant = r.tenant;
    req.apiKeyId = r.keyId;
    return r.tenant;
  };
  await app.register(dashboardPlugin, {
    scheduler: o.scheduler,
    authenticate,
    // Streams are counted and re-checked per API key: revoking a key (`duetime keys revoke`,
    // from any process) ends its streams within events.recheckMs.
    streamOwner: (req) => req.apiKeyId,
    streamOwnersValid: (ids) => o.keys.apiKeysLive({ ids }),
    ...(o.events ? { events: o.events } : {}),
  });
}
