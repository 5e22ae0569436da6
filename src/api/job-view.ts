import { isoInstant } from "../core/instant-text.js";
import type { Job, JobCallbacks } from "../core/job.js";
import type { CancelResult, RescheduleResult } from "../store/store.js";

/**
 * A job as every surface shows it in JSON: the HTTP API, `duetime ... --json`, and the MCP
 * tools' task view (built on it). ISO times, webhook headers, no engine internals (bucket,
 * shard, lease, fence): those are the store's, and mean nothing to a caller.
 */
export interface JobView {
  id: string;
  tenant: string;
  key: string | null;
  status: Job["status"];
  dueAt: string;
  target: string;
  headers: Record<string, string> | null;
  payload: unknown;
  attempts: number;
  maxAttempts: number;
  expireAfterMs: number | null;
  version: number;
  lastError: string | null;
  lastResult: unknown;
  createdAt: string;
  updatedAt: string;
  firedAt: string | null;
  finishedAt: string | null;
  /** The recurring series this job is an occurrence of, or null. */
  scheduleId: string | null;
  /** The occurrence's nominal wall time in the series' zone (Job.nominal), or null. */
  nominal: string | null;
  /** Its tags, in the order given (empty when none). */
  tags: readonly string[];
  /** Its outcome callback URLs (src/core/callbacks.ts), or null when none were given. */
  callbacks: JobCallbacks | null;
  /** For a callback job: the id of the job whose outcome it reports; else null. */
  callbackOf: string | null;
  /** The id of the pause holding this pending job (src/core/pause.ts), or null when none does. */
  pausedBy: string | null;
}

export function jobView(job: Job): JobView {
  const headers = job.targetOptions?.headers;
  return {
    id: job.id,
    tenant: job.tenant,
    key: job.key,
    status: job.status,
    dueAt: iso(job.dueAt),
    target: job.target,
    headers:
      typeof headers === "object" && headers !== null ? (headers as Record<string, string>) : null,
    payload: job.payload,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    expireAfterMs: job.expireAfterMs,
    version: job.version,
    lastError: job.lastError,
    lastResult: job.lastResult,
    createdAt: iso(job.createdAt),
    updatedAt: iso(job.updatedAt),
    firedAt: job.firedAt === null ? null : iso(job.firedAt),
    finishedAt: job.finishedAt === null ? null : iso(job.finishedAt),
    scheduleId: job.scheduleId,
    nominal: job.nominal,
    tags: job.tags,
    callbacks: job.callbacks,
    callbackOf: job.callbackOf,
    pausedBy: job.pausedBy,
  };
}

const iso = isoInstant;

/** What a cancel, reschedule or retry did, with its jobs in the one JSON view. */
export type OutcomeView =
  | { readonly outcome: "not-found"; readonly id: string }
  | {
      readonly outcome: Exclude<
        CancelResult["outcome"] | RescheduleResult["outcome"],
        "not-found" | "key-conflict"
      >;
      readonly job: JobView;
    }
  | { readonly outcome: "key-conflict"; readonly job: JobView; readonly holder: JobView };

export function outcomeView(r: CancelResult | RescheduleResult, id: string): OutcomeView {
  if (r.outcome === "not-found") return { outcome: r.outcome, id };
  if (r.outcome === "key-conflict") {
    return { outcome: r.outcome, job: jobView(r.job), holder: jobView(r.holder) };
  }
  return { outcome: r.outcome, job: jobView(r.job) };
}
