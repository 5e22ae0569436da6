import type { Scheduler } from "../api/scheduler.js";
import { jobView } from "../api/job-view.js";
import { InvalidJobError } from "../core/errors.js";
import type { Job } from "../core/job.js";
import { rejectUnknownFields, requireInteger, requireObject } from "../core/validate.js";
import {
  parseIfMatch,
  tooLate,
  versionConflict,
  type JobChangeVerb,
  type JobRefusal,
} from "../http/job-refusals.js";
import type { CancelResult, DueTime, RescheduleResult } from "../api/scheduler.js";
import { errorAnswer, notFound, type Answer } from "./answers.js";

/**
 * The definite outcomes of cancel, snooze and retry, answered as the REST API answers them
 * (the same refusals, src/http/job-refusals.ts) with the job in the one JSON view: 200 done,
 * 404 not found (or another tenant's), 409 too late (or key conflict on retry), 412 the job
 * changed since the version the caller sent.
 */
export function answerFor(
  r: CancelResult | RescheduleResult,
  id: string,
  verb: JobChangeVerb,
  sent?: number,
): Answer {
  switch (r.outcome) {
    case "cancelled":
    case "rescheduled":
      return { status: 200, body: { outcome: r.outcome, job: jobView(r.job) } };
    case "not-found":
      return notFound(id);
    case "too-late":
      return refusalAnswer(tooLate(r.job, verb));
    case "version-conflict":
      return refusalAnswer(versionConflict(r.job, sent));
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
        { outcome: "key-conflict", job: jobView(r.job), holder: jobView(r.holder) },
      );
  }
}

function refusalAnswer(r: JobRefusal): Answer {
  return { ...errorAnswer(r.status, r.code, r, r.extra), headers: r.headers };
}

/** Fields of a snooze or retry body. */
const MOVE_FIELDS = ["dueAt", "timeZone", "expectedVersion"];

/** A snooze or retry request as the scheduler's move takes it. */
interface MoveRequest {
  /** The due time, when given (read and checked by the scheduler, as the API's). */
  readonly dueAt: unknown;
  readonly opts: { timeZone?: string; expectedVersion?: number };
}

/**
 * A snooze or retry body, `{ dueAt?, timeZone?, expectedVersion? }`, and `If-Match`: the
 * version from `If-Match: "3"` (or `3`), else `expectedVersion`.
 */
function moveRequest(rawBody: unknown, ifMatch: string | undefined): MoveRequest {
  const body = requireObject(rawBody ?? {}, "body");
  rejectUnknownFields(body, MOVE_FIELDS, "");
  const version =
    ifMatch !== undefined
      ? parseIfMatch(ifMatch)
      : body.expectedVersion === undefined
        ? undefined
        : requireInteger(body.expectedVersion, "expectedVersion", 0, Number.MAX_SAFE_INTEGER);
  // Checked by the scheduler's one reading of a due time (resolveDueTime), as the API's.
  const timeZone = body.timeZone as string | undefined;
  return {
    dueAt: body.dueAt,
    opts: {
      ...(timeZone === undefined ? {} : { timeZone }),
      ...(version === undefined ? {} : { expectedVersion: version }),
    },
  };
}

export async function cancelJob(s: Scheduler, tenant: string, id: string): Promise<Answer> {
  return answerFor(await s.cancel(id, { tenant }), id, "cancelled");
}

/** Snooze: body `{ dueAt, timeZone?, expectedVersion? }`; `dueAt` as the API reads it. */
export async function snoozeJob(
  s: Scheduler,
  tenant: string,
  id: string,
  rawBody: unknown,
  ifMatch: string | undefined,
): Promise<Answer> {
  const { dueAt, opts } = moveRequest(rawBody, ifMatch);
  if (dueAt === undefined) {
    throw new InvalidJobError("dueAt", "a time (ISO, epoch ms or e.g. in 10 minutes)", undefined);
  }
  const { expectedVersion, timeZone } = opts;
  const r = await s.reschedule(
    id,
    { dueAt, ...(timeZone === undefined ? {} : { timeZone }) },
    { tenant, ...(expectedVersion === undefined ? {} : { expectedVersion }) },
  );
  return answerFor(r, id, "rescheduled", expectedVersion);
}

/** Retry a dead job: body `{ dueAt?, timeZone?, expectedVersion? }`; due now by default. */
export async function retryJob(
  s: Scheduler,
  tenant: string,
  id: string,
  rawBody: unknown,
  ifMatch: string | undefined,
): Promise<Answer> {
  const { dueAt, opts } = moveRequest(rawBody, ifMatch);
  // A due time that is no time (an object, a boolean) is refused by the scheduler's reading.
  const r = await s.retry(id, {
    tenant,
    ...opts,
    ...(dueAt === undefined ? {} : { dueAt: dueAt as DueTime }),
  });
  return answerFor(r, id, "retried", opts.expectedVersion);
}

/** One job in the one JSON view, and the stored job (for its ETag). */
export async function jobDetail(
  s: Scheduler,
  tenant: string,
  id: string,
): Promise<Answer & { job?: Job }> {
  const job = await s.get(id, { tenant });
  if (!job) return notFound(id);
  return { status: 200, body: { job: jobView(job) }, job };
}
