import { jobView } from "../api/job-view.js";
import { InvalidJobError } from "../core/errors.js";
import type { Job } from "../core/job.js";
import type { ErrorFacts } from "./error-body.js";

/**
 * A change the scheduler answered with a definite refusal (too late, changed meanwhile), as
 * the REST API and the dashboard both answer it: the status, the error's facts, the job as
 * it is now in the one JSON view, and any header. Built here only, so both say the same.
 */
export interface JobRefusal extends ErrorFacts {
  readonly status: number;
  readonly message: string;
  /** Top-level fields beside `error`: the outcome and the job. */
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

/** What the refused change would have made of the job. */
export type JobChangeVerb = "cancelled" | "rescheduled" | "retried" | "replaced";

/** 409: the job is no longer in the state the change needs (firing, finished, or not dead). */
export function tooLate(job: Job, verb: JobChangeVerb): JobRefusal {
  const expected = verb === "retried" ? "a dead job" : "a pending job";
  let message: string;
  if (verb === "retried") message = `job ${job.id} is ${job.status}: only a dead job is retried`;
  else if (job.status === "claimed") {
    message = `too late: job ${job.id} is firing now and cannot be ${verb}`;
  } else message = `too late: job ${job.id} is already ${job.status}`;
  return {
    status: 409,
    code: "too-late",
    field: "status",
    expected,
    received: job.status,
    message,
    extra: { outcome: "too-late", job: jobView(job) },
    headers: {},
  };
}

/** 412: the job changed since the version the caller sent (`sent`, when known). */
export function versionConflict(job: Job, sent: number | undefined): JobRefusal {
  return {
    status: 412,
    code: "version-conflict",
    field: "if-match",
    expected: `the job's current version (${job.version})`,
    received: sent === undefined ? "an older version" : String(sent),
    message: `job ${job.id} changed: it is at version ${job.version}`,
    extra: { outcome: "version-conflict", job: jobView(job) },
    headers: { etag: jobEtag(job) },
  };
}

/** The job's ETag: its version, quoted. */
export function jobEtag(job: Job): string {
  return `"${job.version}"`;
}

/**
 * If-Match: `"3"`, `W/"3"` or `3` is version 3; `*` or absent means any version. The one
 * reading of it, for the API's changes and the dashboard's.
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === "*") return undefined;
  const m = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header);
  if (!m) throw new InvalidJobError("if-match", 'the job\'s ETag (e.g. "3")', header);
  return Number(m[1]);
}
