import { InvalidJobError } from "../../core/errors.js";
import type { Job } from "../../core/job.js";
import { checkWebhookTarget } from "../../core/webhook-target.js";
import { literalAddressRefusal, type PrivateAddressError } from "./address-guard.js";

/** Where a stored job's target may be sent, with the job's own headers. */
export interface DeliverableTarget {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
}

/** Why a stored job's target cannot be sent at all (the job is dead, no retry). */
export type TargetProblem =
  | { readonly kind: "invalid"; readonly message: string }
  | { readonly kind: "refused"; readonly error: PrivateAddressError };

/**
 * The job's target and headers, held to the policy they were created under (jobs stored
 * before a rule existed, or scheduled through the library, are checked here as well), and
 * a host written as an internal address refused (names are judged at connect time).
 */
export function deliverableTarget(
  job: Job,
  allowPrivate: boolean,
): DeliverableTarget | TargetProblem {
  let checked;
  try {
    checked = checkWebhookTarget(
      { target: job.target, headers: job.targetOptions?.headers },
      // The private-address rule is applied below, so a refusal is told apart and logged.
      { allowPrivateTargets: true, fields: { target: "target", headers: "headers" } },
    );
  } catch (err) {
    if (err instanceof InvalidJobError) {
      return { kind: "invalid", message: `not deliverable: ${err.message}` };
    }
    throw err;
  }
  const url = new URL(checked.target);
  const refusal = allowPrivate ? null : literalAddressRefusal(url);
  if (refusal) return { kind: "refused", error: refusal };
  return { url, headers: checked.headers ?? {} };
}
