import { JOB_STATUSES } from "../core/job.js";
import { OPERATION_KIND_NAMES, OPERATION_STATES } from "../core/operation.js";
import { authErrors, errorResponse, json, ref } from "./openapi-schemas.js";

/** The bulk operation routes and schemas of the OpenAPI document (see openapi.ts). */

const opId = {
  name: "id",
  in: "path",
  required: true,
  description: "Operation id. Another tenant's operation answers 404 like a missing one.",
  schema: { type: "string" },
};
const notFound = errorResponse("No such operation of your tenant");
const time = {
  oneOf: [
    { type: "string", description: "ISO time, or text such as 'in 2 hours'" },
    { type: "integer", description: "epoch ms" },
  ],
};
const kinds = [...OPERATION_KIND_NAMES];

export const OPERATION_SCHEMAS = {
  OperationFilter: {
    type: "object",
    additionalProperties: false,
    description:
      "Which of the tenant's jobs: every field given must match. An empty filter is refused unless `all` is true.",
    properties: {
      tags: { type: "array", items: { type: "string", maxLength: 64 }, minItems: 1, maxItems: 16 },
      target: { type: "string", maxLength: 2048 },
      status: {
        oneOf: [
          { type: "string", enum: [...JOB_STATUSES] },
          { type: "array", items: { type: "string", enum: [...JOB_STATUSES] }, minItems: 1 },
        ],
      },
      dueFrom: { ...time, description: "Due at or after" },
      dueTo: { ...time, description: "Due before" },
      keyPrefix: { type: "string", maxLength: 256 },
      all: { type: "boolean", enum: [true], description: "Every job of the tenant" },
    },
  },
  OperationInput: {
    type: "object",
    additionalProperties: false,
    required: ["kind", "filter"],
    properties: {
      kind: { type: "string", enum: kinds },
      filter: ref("OperationFilter"),
      dueAt: { ...time, description: "reschedule: the new due time; retry: default now" },
      shiftMs: { type: "integer", description: "reschedule: move each job by this many ms" },
      of: {
        type: "string",
        enum: kinds.filter((k) => k !== "count"),
        description: "count: the kind whose changes to count",
      },
      key: {
        type: ["string", "null"],
        minLength: 1,
        maxLength: 256,
        description:
          "Idempotency key, unique among the tenant's operations: a start with a held key answers that operation (200, created false) when it is the same request (kind, filter, parameters), and 409 key-conflict otherwise",
      },
    },
  },
  Operation: {
    type: "object",
    required: ["id", "tenant", "kind", "filter", "state", "scanned", "changed", "skipped"],
    properties: {
      id: { type: "string" },
      tenant: { type: "string" },
      key: { type: ["string", "null"], description: "The idempotency key it was started with" },
      kind: { type: "string", enum: kinds },
      filter: ref("OperationFilter"),
      dueAt: { type: ["string", "null"], format: "date-time" },
      shiftMs: { type: ["integer", "null"] },
      of: { type: ["string", "null"] },
      state: { type: "string", enum: [...OPERATION_STATES] },
      scanned: { type: "integer", description: "Jobs read so far" },
      changed: { type: "integer", description: "Jobs changed (count: that would change)" },
      skipped: { type: "integer", description: "Matching jobs left as they were" },
      error: { type: ["string", "null"] },
      createdAt: { type: "string", format: "date-time" },
      updatedAt: { type: "string", format: "date-time" },
      finishedAt: { type: ["string", "null"], format: "date-time" },
    },
  },
  OperationEnvelope: {
    type: "object",
    required: ["operation"],
    properties: { operation: ref("Operation") },
  },
  StartedOperation: {
    type: "object",
    required: ["operation", "created"],
    properties: {
      operation: ref("Operation"),
      created: {
        type: "boolean",
        description: "False when the key was held: nothing new was started",
      },
    },
  },
  OperationKeyConflict: {
    type: "object",
    required: ["error", "operation"],
    properties: {
      error: ref("Error"),
      outcome: { type: "string", enum: ["key-conflict"] },
      operation: ref("Operation"),
    },
  },
  OperationPage: {
    type: "object",
    required: ["operations", "nextCursor"],
    properties: {
      operations: { type: "array", items: ref("Operation") },
      nextCursor: { type: ["string", "null"] },
    },
  },
};

/**
 * Where the routes live: the REST API's `/v1/operations`, or the dashboard's
 * `/v1/dashboard/operations` (the same calls and answers, for the page; its POSTs are read
 * by the dashboard's body rules, hence 413 and 415).
 */
export interface OperationPathsOptions {
  readonly base: string;
  /** The operationId of each route from the REST API's (startOperation...). */
  readonly operationId: (name: string) => string;
  readonly bodyErrors?: boolean;
}

const API_PATHS: OperationPathsOptions = { base: "/v1/operations", operationId: (n) => n };

export function operationPaths(o: OperationPathsOptions = API_PATHS): Record<string, unknown> {
  const id = o.operationId;
  const bodyErrors = o.bodyErrors
    ? {
        "413": errorResponse("Body too large"),
        "415": errorResponse("Body is not application/json"),
      }
    : {};
  return {
    [o.base]: {
      post: {
        operationId: id("startOperation"),
        summary: "Start a bulk operation on the jobs matching a filter (see docs/managing-jobs.md)",
        requestBody: { required: true, content: json(ref("OperationInput")) },
        responses: {
          "202": {
            description: `Queued: poll GET ${o.base}/{id} for progress`,
            content: json(ref("StartedOperation")),
          },
          "200": {
            description:
              "A count done at once, or the operation already started with this key (created false)",
            content: json(ref("StartedOperation")),
          },
          "400": errorResponse("Invalid kind, filter or parameter (the error names the field)"),
          "409": {
            description:
              "key-conflict: the key started an operation with another kind, filter or parameters (it is in the answer); nothing started",
            content: json(ref("OperationKeyConflict")),
          },
          ...bodyErrors,
          ...authErrors,
        },
      },
      get: {
        operationId: id("listOperations"),
        summary: "The tenant's operations, newest first",
        parameters: [
          {
            name: "state",
            in: "query",
            schema: { type: "string", enum: [...OPERATION_STATES] },
          },
          { name: "cursor", in: "query", schema: { type: "string" } },
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 1000 } },
        ],
        responses: {
          "200": { description: "A page", content: json(ref("OperationPage")) },
          "400": errorResponse("Invalid query"),
          ...authErrors,
        },
      },
    },
    [`${o.base}/{id}`]: {
      get: {
        operationId: id("getOperation"),
        summary: "One operation and its progress",
        parameters: [opId],
        responses: {
          "200": { description: "The operation", content: json(ref("OperationEnvelope")) },
          "404": notFound,
          ...authErrors,
        },
      },
    },
    [`${o.base}/{id}/cancel`]: {
      post: {
        operationId: id("cancelOperation"),
        summary: "Cancel a queued or running operation (the batch in flight finishes first)",
        parameters: [opId],
        responses: {
          "200": {
            description: "The operation: cancelled, or as it was if it had ended",
            content: json(ref("OperationEnvelope")),
          },
          "404": notFound,
          ...bodyErrors,
          ...authErrors,
        },
      },
    },
  };
}
