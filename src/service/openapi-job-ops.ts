import { errorResponse, etagHeader, jobIdParam, json, ref, authErrors } from "./openapi-schemas.js";

/**
 * The operations on one job, by id (/v1/jobs/{id}) and by idempotency key
 * (/v1/jobs/by-key/{key}): one description of each, so both read and answer the same.
 */

const keyParam = {
  name: "key",
  in: "path",
  required: true,
  description:
    "Idempotency key (URL-encoded): the tenant's live job holding it. A key whose job finished is free: 404.",
  schema: { type: "string" },
};

const ifMatch = {
  name: "If-Match",
  in: "header",
  description: "The ETag read with the job: applies only if the job is still at that version",
  schema: { type: "string" },
};

interface Naming {
  readonly param: Record<string, unknown>;
  /** The operationId's suffix: "" by id, "ByKey" by key. */
  readonly suffix: string;
  readonly missing: string;
}

const BY_ID: Naming = {
  param: jobIdParam,
  suffix: "",
  missing: "No such job (or another tenant's)",
};
const BY_KEY: Naming = {
  param: keyParam,
  suffix: "ByKey",
  missing: "No live job of the tenant holds this key",
};

function operations(n: Naming) {
  const notFound = errorResponse(n.missing);
  return {
    get: {
      operationId: `getJob${n.suffix}`,
      summary: "One job",
      parameters: [n.param],
      responses: {
        "200": { description: "The job", headers: etagHeader, content: json(ref("JobEnvelope")) },
        "404": notFound,
        ...authErrors,
      },
    },
    reschedule: {
      post: {
        operationId: `rescheduleJob${n.suffix}`,
        summary: "Move a pending job to a new due time (snooze)",
        parameters: [n.param, ifMatch],
        requestBody: { required: true, content: json(ref("RescheduleInput")) },
        responses: {
          "200": {
            description: "Rescheduled",
            headers: etagHeader,
            content: json(ref("JobOutcome")),
          },
          "400": errorResponse("Invalid due time or If-Match"),
          "404": notFound,
          "409": {
            description: "Too late: the job is firing or finished",
            content: json(ref("OutcomeErrorBody")),
          },
          "412": {
            description: "The job changed since the If-Match version",
            content: json(ref("OutcomeErrorBody")),
          },
          ...authErrors,
        },
      },
    },
    cancel: {
      post: {
        operationId: `cancelJob${n.suffix}`,
        summary: "Cancel a pending job, with a definite answer",
        parameters: [n.param],
        responses: {
          "200": { description: "Cancelled: it will not fire", content: json(ref("JobOutcome")) },
          "404": notFound,
          "409": {
            description: "Too late: the job is firing (claimed) or finished",
            content: json(ref("OutcomeErrorBody")),
          },
          ...authErrors,
        },
      },
    },
  };
}

export function jobOperationPaths(): Record<string, unknown> {
  const id = operations(BY_ID);
  const key = operations(BY_KEY);
  return {
    "/v1/jobs/{id}": { get: id.get },
    "/v1/jobs/{id}/reschedule": id.reschedule,
    "/v1/jobs/{id}/cancel": id.cancel,
    "/v1/jobs/by-key/{key}": { get: key.get },
    "/v1/jobs/by-key/{key}/reschedule": key.reschedule,
    "/v1/jobs/by-key/{key}/cancel": key.cancel,
  };
}
