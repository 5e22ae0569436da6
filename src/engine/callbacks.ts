import { callbackJob, type CallbackOutcome } from "../core/callbacks.js";
import type { Job } from "../core/job.js";
import type { Settlement } from "../store/store.js";

/**
 * The settlement with the callback job reporting it (core/callbacks.ts), when the claimed
 * `job` names a URL for its outcome: the store writes both in one transaction, or neither
 * when the claim was no longer ours. Expired and released claims report nothing.
 */
export function withCallback(
  job: Job,
  st: Settlement,
  now: number,
  newId: () => string,
): Settlement {
  if (job.callbacks === null) return st;
  const outcome = callbackOutcome(st, now);
  if (outcome === null) return st;
  const callback = callbackJob(job, outcome, newId());
  return callback === null ? st : { ...st, callback };
}

function callbackOutcome(st: Settlement, now: number): CallbackOutcome | null {
  const at = { now, firedAt: st.firedAt };
  switch (st.outcome) {
    case "succeeded":
      return { ...at, event: "succeeded", error: null, result: st.result };
    case "dead":
      return { ...at, event: "dead", error: st.error, result: null };
    case "retry":
      return { ...at, event: "failed", error: st.error, result: null, retryAt: st.retryAt };
    default:
      return null;
  }
}
