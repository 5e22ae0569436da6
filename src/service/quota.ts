import { InvalidOptionError, QuotaExceededError } from "../core/errors.js";
import type { JobStatus } from "../core/job.js";
import { RateLimiter } from "./rate-limit.js";

/** Per-tenant quotas of the service. 0 (the default) turns a quota off. */
export interface TenantQuotaOptions {
  /** Most live jobs (pending or claimed) one tenant may have. Default 0: no limit. */
  readonly maxLiveJobs?: number;
  /** Jobs one tenant may create per second, sustained (a batch counts each job). Default 0: no limit. */
  readonly createsPerSecond?: number;
  /** Jobs one tenant may create at once after being idle. Default 2 x createsPerSecond. */
  readonly createsBurst?: number;
}

/**
 * When a live-jobs refusal suggests asking again, in ms: the quota frees as jobs fire or
 * are cancelled, which no counter predicts; a minute keeps a full tenant's retries cheap.
 */
const LIVE_JOBS_RETRY_MS = 60_000;

/**
 * The service's per-tenant quotas as a Scheduler `admit` hook, so every way of creating
 * jobs (POST /v1/jobs, the batch route, task.create over MCP) is held to them. The live
 * count comes from the store's per-tenant status counters (one indexed read, never a row
 * count); creates per second are the RateLimiter's token bucket per tenant, the mechanism
 * behind the per-key request limit. The live check is made before the write and is not a
 * lock: creates racing each other may pass it together and overshoot by their own size.
 */
export function tenantQuotas(
  options: TenantQuotaOptions,
  countByStatus: (tenant: string) => Promise<Record<JobStatus, number>>,
): ((request: { readonly tenant: string; readonly jobs: number }) => Promise<void>) | undefined {
  const maxLive = count(options.maxLiveJobs, "quotas.maxLiveJobs");
  const perSecond = count(options.createsPerSecond, "quotas.createsPerSecond");
  if (options.createsBurst !== undefined) count(options.createsBurst, "quotas.createsBurst");
  if (maxLive <= 0 && perSecond <= 0) return undefined;
  const creates = new RateLimiter({
    perSecond,
    ...(options.createsBurst === undefined ? {} : { burst: options.createsBurst }),
  });
  return async ({ tenant, jobs }) => {
    if (maxLive > 0) {
      const counts = await countByStatus(tenant);
      const live = counts.pending + counts.claimed;
      if (live + jobs > maxLive) {
        throw new QuotaExceededError(
          tenant,
          "liveJobs",
          `at most ${maxLive} live jobs (pending or claimed)`,
          `${live} live and ${jobs} more`,
          LIVE_JOBS_RETRY_MS,
        );
      }
    }
    const waitMs = creates.take(tenant, jobs);
    if (waitMs > 0) {
      const tooBig = waitMs === Infinity;
      throw new QuotaExceededError(
        tenant,
        "createsPerSecond",
        `at most ${creates.perSecond} new jobs per second (burst ${creates.burst})`,
        tooBig ? `${jobs} jobs at once, more than the burst` : `${jobs} more now`,
        tooBig ? 1000 : waitMs,
      );
    }
  };
}

function count(value: number | undefined, name: string): number {
  if (value === undefined) return 0;
  if (!Number.isInteger(value) || value < 0) {
    throw new InvalidOptionError(name, "an integer of at least 0 (0: no limit)", value);
  }
  return value;
}
