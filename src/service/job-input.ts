import type { ScheduleInput } from "../core/schedule-input.js";
import { rejectUnknownFields, requireObject } from "../core/validate.js";
import { callbackUrlPolicy, checkWebhookTarget } from "../core/webhook-target.js";
import { optionalCallbacks } from "../core/callbacks.js";

export { jobView, type JobView } from "../api/job-view.js";

/**
 * The HTTP shape of a job and its translation to the library's ScheduleInput. The field
 * names are the library's (errors read the same everywhere) except two: `tenant` is never
 * accepted (it comes from the API key) and `headers` is the HTTP face of `targetOptions`.
 * `callbacks` URLs are held to the webhook target policy here (private addresses), as the
 * target is.
 * Everything else is checked by the library's own validateScheduleInput.
 */
export const HTTP_JOB_FIELDS = [
  "dueAt",
  "delayMs",
  "timeZone",
  "locale",
  "target",
  "headers",
  "payload",
  "key",
  "keyMode",
  "maxWaitMs",
  "maxAttempts",
  "expireAfterMs",
  "tags",
  "callbacks",
] as const;

export interface JobInputContext {
  readonly tenant: string;
  readonly allowPrivateTargets: boolean;
  /** Prefix of field names in errors ("jobs[3]."). */
  readonly prefix?: string;
}

/** Checks the HTTP-only parts of a job body and returns the library input. */
export function toScheduleInput(raw: unknown, ctx: JobInputContext): ScheduleInput {
  const p = ctx.prefix ?? "";
  const body = requireObject(raw, p === "" ? "body" : p.replace(/\.$/, ""));
  rejectUnknownFields(body, HTTP_JOB_FIELDS, p);
  const { headers } = checkWebhookTarget(
    { target: body.target, headers: body.headers },
    {
      allowPrivateTargets: ctx.allowPrivateTargets,
      fields: { target: `${p}target`, headers: `${p}headers` },
    },
  );
  // the callback URLs under the target's own policy (a private address refused alike)
  const callbacks = optionalCallbacks(
    body.callbacks,
    p,
    callbackUrlPolicy(ctx.allowPrivateTargets),
  );
  const rest = { ...body };
  delete rest.headers;
  delete rest.callbacks;
  return {
    ...(rest as Omit<ScheduleInput, "tenant" | "targetOptions">),
    tenant: ctx.tenant,
    targetOptions: headers === null ? null : { headers },
    ...(callbacks === undefined ? {} : { callbacks }),
  };
}
