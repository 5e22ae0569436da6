import type { FastifyReply } from "fastify";
import { isoInZone } from "../../core/wall-time.js";
import type { Job } from "../../core/job.js";
import { jobEtag } from "../../http/job-refusals.js";
import { jobView } from "../job-input.js";

/** The answer of the job routes that carries one job: its ETag, Location and JSON view. */
export function sendJob(
  reply: FastifyReply,
  job: Job,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return reply
    .header("etag", jobEtag(job))
    .header("location", `/v1/jobs/${job.id}`)
    .send({ ...extra, job: jobView(job) });
}

/**
 * The due time as the clocks of the zone the request was read in show it, with that zone:
 * "2026-12-03T10:00:00.000+01:00", "Europe/Paris" (the request's timeZone, else the
 * service's).
 */
export function localDue(job: Job, timeZone: string): { dueAtLocal: string; timeZone: string } {
  return { dueAtLocal: isoInZone(job.dueAt, timeZone), timeZone };
}
