import type { Scheduler } from "../api/scheduler.js";
import { InvalidJobError } from "../core/errors.js";
import { optionalCallbacks } from "../core/callbacks.js";
import type { JobCallbacks } from "../core/job.js";
import { callbackUrlPolicy, checkWebhookTarget } from "../core/webhook-target.js";
import { REMINDER_TARGET } from "./reminders.js";

/**
 * What every tool body runs with. The tenant is fixed at server creation: it is passed to
 * every scheduler call, so another tenant's task (or series) reads exactly as a missing one.
 */
export interface ToolContext {
  readonly scheduler: Scheduler;
  readonly tenant: string;
  readonly webhooks: boolean;
  /** How far in the past scheduled_at may be, ms; null accepts any (it runs at once). */
  readonly maxPastMs: number | null;
  /** Accept private, loopback and link-local webhook targets. */
  readonly allowPrivateTargets: boolean;
}

/** The job target (and its options) of webhook_url and webhook_headers, checked as POST /v1/jobs checks them. */
export function webhookTarget(
  ctx: ToolContext,
  url: string | undefined,
  headers: Record<string, string> | undefined,
): { target: string; options: Record<string, unknown> | null } {
  if (url === undefined) {
    if (headers !== undefined) {
      throw new InvalidJobError("webhook_headers", "to be given only with webhook_url", headers);
    }
    return { target: REMINDER_TARGET, options: null };
  }
  if (!ctx.webhooks) {
    throw new InvalidJobError(
      "webhook_url",
      "no webhook: this server fires reminders only and cannot deliver webhooks " +
        "(connect to `duetime serve` at /mcp, or run `duetime mcp --no-fire` beside it)",
      url,
    );
  }
  // The same policy as POST /v1/jobs: one set of rules and limits, whatever the surface.
  const checked = checkWebhookTarget(
    { target: url, headers },
    {
      allowPrivateTargets: ctx.allowPrivateTargets,
      fields: { target: "webhook_url", headers: "webhook_headers" },
    },
  );
  return {
    target: checked.target,
    options: checked.headers === null ? null : { headers: checked.headers },
  };
}

/**
 * task.create's `callbacks`, checked as POST /v1/jobs checks them (optionalCallbacks under
 * the webhook target policy). They are webhook deliveries, so a server that cannot deliver
 * webhooks refuses them as it refuses webhook_url.
 */
export function outcomeCallbacks(ctx: ToolContext, value: unknown): JobCallbacks | undefined {
  if (value !== undefined && !ctx.webhooks) {
    throw new InvalidJobError(
      "callbacks",
      "no callbacks: this server fires reminders only and cannot deliver webhooks " +
        "(connect to `duetime serve` at /mcp, or run `duetime mcp --no-fire` beside it)",
      value,
    );
  }
  return optionalCallbacks(value, "", callbackUrlPolicy(ctx.allowPrivateTargets));
}
