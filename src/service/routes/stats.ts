import type { FastifyInstance } from "fastify";
import type { Scheduler } from "../../api/scheduler.js";
import { InvalidJobError } from "../../core/errors.js";
import { rejectUnknownFields, requireObject } from "../../core/validate.js";

/** Minutes of per-minute activity GET /v1/stats reports. */
const ACTIVITY_MINUTES = 60;

/**
 * GET /v1/stats for the request's tenant: counts by state and the pending histogram per
 * bucket (the store's counters), jobs held by pauses and pauses active, lateness percentiles and outcomes per minute over the last
 * hour (what this server ran: the scheduler's activity recorder).
 */
export function statsRoutes(app: FastifyInstance, scheduler: Scheduler): void {
  app.get("/v1/stats", async (request) => {
    const q = requireObject(request.query ?? {}, "query");
    rejectUnknownFields(q, ["buckets"], "");
    let buckets = 48;
    if (q.buckets !== undefined) {
      const text = String(q.buckets);
      buckets = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
      if (!(buckets >= 1 && buckets <= 10_000)) {
        throw new InvalidJobError("buckets", "an integer from 1 to 10000", q.buckets);
      }
    }
    const tenant = request.tenant;
    const stats = await scheduler.stats({ tenant, buckets });
    const now = scheduler.now();
    const shown = stats.buckets.reduce((n, b) => n + b.pending, 0);
    const lateness = scheduler.activity.lateness(now, ACTIVITY_MINUTES, tenant);
    return {
      counts: stats.counts,
      bucketWidthMs: stats.bucketWidthMs,
      buckets: stats.buckets.map((b) => ({
        bucket: new Date(b.bucket).toISOString(),
        pending: b.pending,
        overdue: b.bucket + stats.bucketWidthMs <= now,
      })),
      pendingBeyondBuckets: Math.max(0, stats.counts.pending - shown),
      paused: stats.paused,
      lateness: { windowMinutes: ACTIVITY_MINUTES, ...lateness },
      perMinute: scheduler.activity.minutes(now, ACTIVITY_MINUTES, tenant).map((m) => ({
        minute: new Date(m.minute).toISOString(),
        succeeded: m.succeeded,
        // Deprecated alias of `succeeded`, kept for one release (docs/http-api.md).
        fired: m.succeeded,
        failed: m.failed,
        dead: m.dead,
        expired: m.expired,
      })),
    };
  });
}
