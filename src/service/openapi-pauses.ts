import { PAUSE_PAGE } from "../api/pauses.js";
import { MAX_PAUSE_TAG_LENGTH, ON_RESUME_POLICIES, PAUSE_STATES } from "../core/pause.js";
import { TARGET_RULE } from "../core/schedule-input.js";
import { authErrors, errorResponse, json, ref } from "./openapi-schemas.js";

/** The pause routes and schemas of the OpenAPI document (see openapi.ts). */

const pauseId = {
  name: "id",
  in: "path",
  required: true,
  description: "Pause id. Another tenant's pause answers 404 like a missing one.",
  schema: { type: "string" },
};
const notFound = errorResponse("No such pause of your tenant");
const unsupported = errorResponse(
  "The server's store has no pauses (`not-implemented`, field `store`); nothing was written",
);
const policies = [...ON_RESUME_POLICIES];

export const PAUSE_SCHEMAS = {
  PauseScope: {
    description:
      "What the pause holds within the tenant: every job, the jobs of one target (a handler name, or a webhook origin such as https://hooks.example.com covering every URL under it), or the jobs carrying one tag",
    oneOf: [
      {
        type: "object",
        additionalProperties: false,
        required: ["tenant"],
        properties: { tenant: { type: "boolean", enum: [true] } },
      },
      {
        type: "object",
        additionalProperties: false,
        required: ["target"],
        properties: { target: { type: "string", minLength: 1, maxLength: TARGET_RULE.max } },
      },
      {
        type: "object",
        additionalProperties: false,
        required: ["tag"],
        properties: { tag: { type: "string", minLength: 1, maxLength: MAX_PAUSE_TAG_LENGTH } },
      },
    ],
  },
  PauseInput: {
    type: "object",
    additionalProperties: false,
    required: ["scope"],
    properties: {
      scope: ref("PauseScope"),
      onResume: {
        type: "string",
        enum: policies,
        description:
          "What the held jobs that came due while paused do on resume: fire late (when absent), expire (recorded), or shift by the paused duration",
      },
    },
  },
  Pause: {
    type: "object",
    required: [
      "id",
      "tenant",
      "scope",
      "onResume",
      "state",
      "pausedAt",
      "resumedAt",
      "heldJobs",
      "holdComplete",
    ],
    properties: {
      id: { type: "string" },
      tenant: { type: "string" },
      scope: ref("PauseScope"),
      onResume: { type: "string", enum: policies },
      state: {
        type: "string",
        enum: [...PAUSE_STATES],
        description: "active: holding; resuming: its held jobs being given back; resumed: done",
      },
      pausedAt: { type: "string", format: "date-time" },
      resumedAt: { type: ["string", "null"], format: "date-time" },
      heldJobs: { type: "integer", description: "Jobs it holds now" },
      holdComplete: {
        type: "boolean",
        description: "Whether every job pending when it was made has been found and held",
      },
    },
  },
  PauseEnvelope: {
    type: "object",
    required: ["pause"],
    properties: { pause: ref("Pause") },
  },
  PauseList: {
    type: "object",
    required: ["pauses", "nextCursor"],
    properties: {
      pauses: { type: "array", items: ref("Pause") },
      nextCursor: {
        type: ["string", "null"],
        description: "Pass as `cursor` for the next page; null on the last",
      },
    },
  },
  DashboardPause: {
    description: "A pause as the dashboard's pauses page shows it (src/dashboard/pauses.ts)",
    allOf: [
      ref("Pause"),
      {
        type: "object",
        required: ["description"],
        properties: {
          description: {
            type: "string",
            description: 'The scope in words: "target mail", "tag user:42", "the whole tenant"',
          },
        },
      },
    ],
  },
  DashboardPauseEnvelope: {
    type: "object",
    required: ["pause"],
    properties: { pause: ref("DashboardPause") },
  },
  DashboardPauseList: {
    type: "object",
    required: ["pauses", "nextCursor"],
    properties: {
      pauses: { type: "array", items: ref("DashboardPause") },
      nextCursor: {
        type: ["string", "null"],
        description: "Pass as `cursor` for the next page; null on the last",
      },
    },
  },
  DashboardPauseResumed: {
    type: "object",
    required: ["pause", "releasing"],
    properties: {
      pause: ref("DashboardPause"),
      releasing: ref("PauseReleasing"),
    },
  },
  PauseResumed: {
    type: "object",
    required: ["pause", "releasing"],
    properties: {
      pause: ref("Pause"),
      releasing: ref("PauseReleasing"),
    },
  },
  PauseReleasing: {
    type: "object",
    required: ["jobs", "onResume"],
    description:
      "The held jobs this resume gives back, in the background (the pause is `resuming` until the last one is)",
    properties: {
      jobs: { type: "integer", description: "0 when the pause had been resumed before" },
      onResume: { type: "string", enum: policies },
    },
  },
};

const stateParam = {
  name: "state",
  in: "query",
  description: "Comma-separated or repeated states",
  schema: { type: "string" },
};

/** The make and list operations of a pauses collection: the API's or the dashboard's. */
interface CollectionOptions {
  readonly createId: string;
  readonly createSummary: string;
  readonly listId: string;
  readonly listSummary: string;
  /** Schemas of the answers: one pause, the list. */
  readonly envelope: string;
  readonly list: string;
  /** Responses a POST has besides the API's (the dashboard's body rules: 413, 415). */
  readonly postErrors?: Record<string, unknown>;
  /** Query parameters of the list besides `state` (the API's paging). */
  readonly listParams?: readonly Record<string, unknown>[];
}

const pagingParams = [
  {
    name: "limit",
    in: "query",
    description: `Pauses per page, 1-${PAUSE_PAGE.max} (default ${PAUSE_PAGE.default})`,
    schema: { type: "integer", minimum: 1, maximum: PAUSE_PAGE.max },
  },
  {
    name: "cursor",
    in: "query",
    description: "The `nextCursor` of the page before",
    schema: { type: "string", maxLength: 64 },
  },
];

function pauseCollection(o: CollectionOptions): Record<string, unknown> {
  return {
    post: {
      operationId: o.createId,
      summary: o.createSummary,
      requestBody: { required: true, content: json(ref("PauseInput")) },
      responses: {
        "201": { description: "The active pause", content: json(ref(o.envelope)) },
        "400": errorResponse("Invalid scope or onResume (the error names the field)"),
        "501": unsupported,
        ...o.postErrors,
        ...authErrors,
      },
    },
    get: {
      operationId: o.listId,
      summary: o.listSummary,
      parameters: [stateParam, ...(o.listParams ?? [])],
      responses: {
        "200": { description: "The pauses", content: json(ref(o.list)) },
        "400": errorResponse("Invalid query"),
        "501": unsupported,
        ...authErrors,
      },
    },
  };
}

export function pausePaths(): Record<string, unknown> {
  return {
    "/v1/pauses": pauseCollection({
      createId: "createPause",
      createSummary:
        "Pause the tenant's jobs, one target's or one tag's: held, never claimed, until resumed (see docs/managing-jobs.md)",
      listId: "listPauses",
      listSummary:
        "A page of the tenant's pauses in creation order (by default the active and resuming)",
      listParams: pagingParams,
      envelope: "PauseEnvelope",
      list: "PauseList",
    }),
    "/v1/pauses/{id}": {
      get: {
        operationId: "getPause",
        summary: "One pause and the jobs it holds",
        parameters: [pauseId],
        responses: {
          "200": { description: "The pause", content: json(ref("PauseEnvelope")) },
          "404": notFound,
          "501": unsupported,
          ...authErrors,
        },
      },
      delete: {
        operationId: "resumePause",
        summary:
          "Resume a pause: its held jobs are given back by its onResume policy (a pause resumed before answers as it is)",
        parameters: [pauseId],
        responses: {
          "200": { description: "The pause, resuming", content: json(ref("PauseResumed")) },
          "404": notFound,
          "501": unsupported,
          ...authErrors,
        },
      },
    },
  };
}

/** The dashboard's pause routes: the same calls and answers, the scope in words added. */
export function dashboardPausePaths(): Record<string, unknown> {
  const bodyErrors = {
    "413": errorResponse("Body too large"),
    "415": errorResponse("Body is not application/json"),
  };
  return {
    "/v1/dashboard/pauses": pauseCollection({
      createId: "dashboardCreatePause",
      createSummary: "Pause the tenant's jobs, one target's or one tag's, for the pauses page",
      listId: "dashboardListPauses",
      listSummary:
        "A page of the tenant's pauses in creation order, in every state unless `state` says",
      listParams: pagingParams,
      envelope: "DashboardPauseEnvelope",
      list: "DashboardPauseList",
      postErrors: bodyErrors,
    }),
    "/v1/dashboard/pauses/{id}/resume": {
      post: {
        operationId: "dashboardResumePause",
        summary:
          "Resume a pause: its held jobs are given back by its onResume policy (any body is ignored)",
        parameters: [pauseId],
        responses: {
          "200": {
            description: "The pause, resuming",
            content: json(ref("DashboardPauseResumed")),
          },
          "404": notFound,
          "501": unsupported,
          ...bodyErrors,
          ...authErrors,
        },
      },
    },
  };
}
