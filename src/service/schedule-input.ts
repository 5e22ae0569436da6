import type { RecurringInput } from "../api/series.js";
import { RECURRING_INPUT_FIELDS, RECURRING_PATCH_FIELDS } from "../core/series-input.js";
import { rejectUnknownFields, requireObject } from "../core/validate.js";
import { checkHeaders, checkWebhookTarget } from "../core/webhook-target.js";

/**
 * The HTTP shape of a recurring series and its translation to the library's RecurringInput,
 * as job-input.ts does for jobs: the library's field names, but `tenant` is never accepted
 * (the API key says it) and `headers` is the HTTP face of `targetOptions`. Everything else
 * is checked by the library's one validator (validateRecurringInput).
 */
const httpFields = (fields: readonly string[]): readonly string[] => [
  ...fields.filter((f) => f !== "tenant" && f !== "targetOptions"),
  "headers",
];

/** The fields of POST /v1/schedules. */
export const HTTP_SCHEDULE_FIELDS: readonly string[] = httpFields(RECURRING_INPUT_FIELDS);
/** The fields of PATCH /v1/schedules/{id}: all but the series' identity (key). */
export const HTTP_SCHEDULE_PATCH_FIELDS: readonly string[] = httpFields(RECURRING_PATCH_FIELDS);

export interface ScheduleInputContext {
  readonly tenant: string;
  readonly allowPrivateTargets: boolean;
}

/** A create body as the library's input, the target held to the service's target policy. */
export function toRecurringInput(raw: unknown, ctx: ScheduleInputContext): RecurringInput {
  const body = requireObject(raw, "body");
  rejectUnknownFields(body, HTTP_SCHEDULE_FIELDS, "");
  const { headers } = checkWebhookTarget(
    { target: body.target, headers: body.headers },
    {
      allowPrivateTargets: ctx.allowPrivateTargets,
      fields: { target: "target", headers: "headers" },
    },
  );
  const rest = { ...body };
  delete rest.headers;
  return {
    ...(rest as Omit<RecurringInput, "tenant" | "targetOptions">),
    tenant: ctx.tenant,
    targetOptions: headers === null ? null : { headers },
  };
}

/**
 * A PATCH body as the library's changes: a target given is held to the target policy, and
 * `headers` given replaces the stored headers (null removes them); absent, they are kept.
 */
export function toSchedulePatch(raw: unknown, ctx: ScheduleInputContext): Partial<RecurringInput> {
  const body = requireObject(raw, "body");
  rejectUnknownFields(body, HTTP_SCHEDULE_PATCH_FIELDS, "");
  if (body.target !== undefined) {
    checkWebhookTarget(
      { target: body.target },
      {
        allowPrivateTargets: ctx.allowPrivateTargets,
        fields: { target: "target", headers: "headers" },
      },
    );
  }
  const rest: Record<string, unknown> = { ...body };
  delete rest.headers;
  if (body.headers !== undefined) {
    rest.targetOptions =
      body.headers === null ? null : { headers: checkHeaders(body.headers, "headers") };
  }
  return rest as Partial<RecurringInput>;
}
