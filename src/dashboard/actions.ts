import type { Scheduler } from "../api/scheduler.js";
import { InvalidJobError } from "../core/errors.js";
import type { Job } from "../core/job.js";
import { rejectUnknownFields, requireObject } from "../core/validate.js";
import type { CancelResult, RescheduleResult } from "../api/scheduler.js";
import { errorAnswer, notFound, type Answer } from "./answers.js";

/**
 * The definite outcomes of cancel, snooze and retry, answered as the REST API answers them:
 * 200 done, 404 not found (or another tenant's), 409 too late (or key conflict on retry),
 * 412 the job changed since the version the caller sent.
 */
export function answerFor(r: CancelResult | RescheduleResult, id: string): Answer {
  switch (r.outcome) {
    case "cancelled":
    case "rescheduled":
      return { status: 200, body: { outcome: r.outcome, job: r.job } };
    case "not-found":
      return notFound(id);
    case "too-late":
      return errorAnswer(
        409,
        "too-late",
        {
          field: "status",
          expected: "a pending job (a dead one, to retry)",
          received: r.job.status,
          message:
            r.job.status === "claimed"
              ? `too late: job ${id} is firing now`
              : `too late: job ${id} is already ${r.job.status}`,
        },
        { outcome: "too-late", job: r.job },
      );
    case "version-conflict":
      return errorAnswer(
        412,
        "version-conflict",
        {
          field: "if-match",
          expected: `the job's current version (${r.job.version})`,
          received: "an older version",
          message: `job ${id} changed: it is at version ${r.job.version}`,
        },
        { outcome: "version-conflict", job: r.job },
      );
    case "key-conflict":
      return errorAnswer(
        409,
        "key-conflict",
        {
          field: "key",
          expected: "no live job holding this job's idempotency key",
          received: r.job.key,
          message: `live job ${r.holder.id} holds this job's idempotency key`,
        },
        { outcome: "key-conflict", job: r.job },
      );
  }
}

/** The version the caller read: `If-Match: "3"` (or `3`), else `expectedVersion` in the body. */
function expectedVersion(
  ifMatch: string | undefined,
  body: Record<string, unknown>,
): number | undefined {
  if (ifMatch !== undefined) {
    if (ifMatch.trim() === "*") return undefined;
    const m = /^(?:W\/)?"?(\d{1,15})"?$/.exec(ifMatch.trim());
    if (!m) throw new InvalidJobError("if-match", 'a job version such as "3"', ifMatch);
    return Number(m[1]);
  }
  const v = body.expectedVersion;
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new InvalidJobError("expectedVersion", "an integer", v);
  }
  return v;
}

function optionalZone(body: Record<string, unknown>): { timeZone?: string } {
  if (body.timeZone === undefined) return {};
  if (typeof body.timeZone !== "string") {
    throw new InvalidJobError("timeZone", "an IANA time zone name", body.timeZone);
  }
  return { timeZone: body.timeZone };
}

export async function cancelJob(s: Scheduler, tenant: string, id: string): Promise<Answer> {
  return answerFor(await s.cancel(id, { tenant }), id);
}

/** Snooze: body `{ dueAt, timeZone?, expectedVersion? }`; `dueAt` as the API reads it. */
export async function snoozeJob(
  s: Scheduler,
  tenant: string,
  id: string,
  rawBody: unknown,
  ifMatch: string | undefined,
): Promise<Answer> {
  const body = requireObject(rawBody ?? {}, "body");
  rejectUnknownFields(body, ["dueAt", "timeZone", "expectedVersion"], "");
  if (body.dueAt === undefined) {
    throw new InvalidJobError("dueAt", "a time (ISO, epoch ms or e.g. in 10 minutes)", undefined);
  }
  const version = expectedVersion(ifMatch, body);
  const r = await s.reschedule(id, body.dueAt as string | number, {
    tenant,
    ...optionalZone(body),
    ...(version === undefined ? {} : { expectedVersion: version }),
  });
  return answerFor(r, id);
}

/** Retry a dead job: body `{ dueAt?, timeZone?, expectedVersion? }`; due now by default. */
export async function retryJob(
  s: Scheduler,
  tenant: string,
  id: string,
  rawBody: unknown,
  ifMatch: string | undefined,
): Promise<Answer> {
  const body = requireObject(rawBody ?? {}, "body");
  rejectUnknownFields(body, ["dueAt", "timeZone", "expectedVersion"], "");
  const version = expectedVersion(ifMatch, body);
  const r = await s.retry(id, {
    tenant,
    ...optionalZone(body),
    ...(body.dueAt === undefined ? {} : { dueAt: body.dueAt as string | number }),
    ...(version === undefined ? {} : { expectedVersion: version }),
  });
  return answerFor(r, id);
}

/** One job, with its ETag (the version, for `If-Match`). */
export async function jobDetail(
  s: Scheduler,
  tenant: string,
  id: string,
): Promise<Answer & { job?: Job }> {
  const job = await s.get(id, { tenant });
  if (!job) return notFound(id);
  return { status: 200, body: { job }, job };
}
