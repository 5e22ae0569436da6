import { DASHBOARD_PATHS, DASHBOARD_SCHEMAS } from "./openapi-dashboard.js";
import { authErrors, errorResponse, etagHeader, json, ref, SCHEMAS } from "./openapi-schemas.js";
import { jobOperationPaths } from "./openapi-job-ops.js";
import { SCHEDULE_PATHS, SCHEDULE_SCHEMAS } from "./openapi-schedules.js";
import { OPERATION_SCHEMAS, operationPaths } from "./openapi-operations.js";
import { dashboardPausePaths, PAUSE_SCHEMAS, pausePaths } from "./openapi-pauses.js";
import { MAX_BATCH } from "./routes/jobs.js";

/**
 * The OpenAPI 3.1 description served at /openapi.json. test/service/openapi.test.ts checks
 * it with an OpenAPI validator and checks that its paths are exactly the server's routes.
 */

/** `tag` of the job listing and count. */
const TAG_PARAM = {
  name: "tag",
  in: "query",
  description:
    "Only the jobs carrying this tag, read from the tag index; the page is then in job id (creation) order",
  schema: { type: "string", maxLength: 64 },
} as const;

export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "duetime",
      version,
      description:
        "Schedule one-shot jobs that POST a signed webhook at their due time. Every /v1 route " +
        "needs `Authorization: Bearer <key>` (duetime keys create --tenant T); a key sees only " +
        "its tenant's jobs and schedules (recurring series, /v1/schedules). Errors have one shape: `{error: {code, field, expected, received, message}}`. " +
        "The web dashboard is served at `/` (no key to load it; its data routes under " +
        "/v1/dashboard and the live stream /v1/events need one).",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths: {
      "/v1/jobs": {
        post: {
          operationId: "createJob",
          summary: "Schedule one job",
          requestBody: { required: true, content: json(ref("JobInput")) },
          responses: {
            "201": {
              description: "Created",
              headers: etagHeader,
              content: json(ref("JobCreated")),
            },
            "200": {
              description:
                "The idempotency key matched a live job: returned as it is (outcome existing) or replaced (outcome replaced)",
              headers: etagHeader,
              content: json(ref("JobCreated")),
            },
            "400": errorResponse("Invalid job (the field, what was expected, what was received)"),
            "409": {
              description:
                "keyMode replace or debounce met the key's job firing (too-late): nothing changed",
              content: json(ref("OutcomeErrorBody")),
            },
            "413": errorResponse("Body too large"),
            "415": errorResponse("Body is not application/json"),
            ...authErrors,
          },
        },
        get: {
          operationId: "listJobs",
          summary: "List jobs in due order (stable: due time, then id), one page at a time",
          parameters: [
            {
              name: "status",
              in: "query",
              description: "One or more states, repeated or comma-separated",
              schema: { type: "string" },
            },
            {
              name: "dueFrom",
              in: "query",
              description: "Due at or after (ISO time with offset, epoch ms, or natural language)",
              schema: { type: "string" },
            },
            {
              name: "dueTo",
              in: "query",
              description: "Due before (exclusive)",
              schema: { type: "string" },
            },
            {
              name: "timeZone",
              in: "query",
              description: "IANA zone for natural-language bounds",
              schema: { type: "string" },
            },
            {
              name: "cursor",
              in: "query",
              description: "`nextCursor` of the previous page",
              schema: { type: "string" },
            },
            {
              name: "limit",
              in: "query",
              schema: { type: "integer", minimum: 1, maximum: 1000, default: 50 },
            },
            TAG_PARAM,
          ],
          responses: {
            "200": { description: "A page", content: json(ref("JobPage")) },
            "400": errorResponse("Invalid query parameter"),
            ...authErrors,
          },
        },
      },
      "/v1/jobs/count": {
        get: {
          operationId: "countJobs",
          summary:
            "Count the jobs carrying a tag (by status and due range), from the tag index: the cost tracks the tag's jobs",
          parameters: [
            { ...TAG_PARAM, required: true },
            {
              name: "status",
              in: "query",
              description: "One or more states, repeated or comma-separated",
              schema: { type: "string" },
            },
            { name: "dueFrom", in: "query", schema: { type: "string" } },
            { name: "dueTo", in: "query", schema: { type: "string" } },
            { name: "timeZone", in: "query", schema: { type: "string" } },
          ],
          responses: {
            "200": { description: "The count", content: json(ref("JobCount")) },
            "400": errorResponse("Invalid or missing query parameter"),
            ...authErrors,
          },
        },
      },
      "/v1/jobs/batch": {
        post: {
          operationId: "createJobs",
          summary: `Schedule up to ${MAX_BATCH} jobs, all or nothing`,
          requestBody: {
            required: true,
            content: json({
              type: "object",
              required: ["jobs"],
              additionalProperties: false,
              properties: {
                jobs: { type: "array", minItems: 1, maxItems: MAX_BATCH, items: ref("JobInput") },
              },
            }),
          },
          responses: {
            "201": {
              description: "Stored (at least one new job)",
              content: json(ref("BatchCreated")),
            },
            "200": {
              description: "Every item matched a live job by idempotency key",
              content: json(ref("BatchCreated")),
            },
            "400": {
              description:
                "Some items are invalid; nothing was stored. `errors` lists every bad item",
              content: json(ref("BatchErrorBody")),
            },
            "413": errorResponse("Body too large"),
            "415": errorResponse("Body is not application/json"),
            ...authErrors,
          },
        },
      },
      ...jobOperationPaths(),
      ...SCHEDULE_PATHS,
      "/v1/stats": {
        get: {
          operationId: "getStats",
          summary:
            "The tenant's counts by state, pending per bucket, lateness and fired per minute",
          parameters: [
            {
              name: "buckets",
              in: "query",
              description: "Buckets ahead of now",
              schema: { type: "integer", minimum: 1, maximum: 10000, default: 48 },
            },
          ],
          responses: {
            "200": { description: "Stats", content: json(ref("Stats")) },
            "400": errorResponse("Invalid parameter"),
            ...authErrors,
          },
        },
      },
      "/v1/changes": {
        get: {
          operationId: "listChanges",
          summary:
            "The tenant's change feed: every transition of its jobs, from every node, oldest first",
          parameters: [
            {
              name: "after",
              in: "query",
              description:
                "A cursor (a change's `cursor` or a page's `next`); from the oldest kept when absent",
              schema: { type: "string", pattern: "^(\\d{1,19}\\.)?\\d{1,19}$" },
            },
            {
              name: "limit",
              in: "query",
              description: "Most changes to return",
              schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
            },
          ],
          responses: {
            "200": { description: "A page of changes", content: json(ref("ChangePage")) },
            "400": errorResponse("Invalid cursor or limit"),
            "410": errorResponse(
              "Changes after the cursor were removed by retention (`oldest` says where to resume)",
            ),
            ...authErrors,
          },
        },
      },
      "/mcp": {
        post: {
          operationId: "mcp",
          summary: "MCP (Model Context Protocol) over streamable HTTP, scoped to the key's tenant",
          requestBody: {
            required: true,
            content: json({ type: "object", description: "A JSON-RPC message" }),
          },
          responses: {
            "200": { description: "JSON-RPC answer", content: json({ type: "object" }) },
            ...authErrors,
          },
        },
        get: {
          operationId: "mcpStream",
          summary: "Not offered (stateless endpoint): 405",
          responses: { "405": { description: "Only POST carries MCP messages" }, ...authErrors },
        },
        delete: {
          operationId: "mcpEndSession",
          summary: "Not offered (stateless endpoint): 405",
          responses: { "405": { description: "No sessions to end" }, ...authErrors },
        },
      },
      "/healthz": {
        get: {
          operationId: "health",
          summary: "The process answers",
          security: [],
          responses: { "200": { description: "ok", content: json({ type: "object" }) } },
        },
      },
      "/readyz": {
        get: {
          operationId: "ready",
          summary: "The store answers and the server is not stopping",
          security: [],
          responses: {
            "200": { description: "ready", content: json({ type: "object" }) },
            "503": { description: "not ready", content: json({ type: "object" }) },
          },
        },
      },
      "/metrics": {
        get: {
          operationId: "metrics",
          summary: "Prometheus metrics",
          security: [],
          responses: {
            "200": {
              description: "Prometheus text format",
              content: { "text/plain": { schema: { type: "string" } } },
            },
          },
        },
      },
      "/openapi.json": {
        get: {
          operationId: "openapi",
          summary: "This document",
          security: [],
          responses: { "200": { description: "OpenAPI 3.1", content: json({ type: "object" }) } },
        },
      },
      ...operationPaths(),
      ...pausePaths(),
      ...DASHBOARD_PATHS,
      ...operationPaths({
        base: "/v1/dashboard/operations",
        operationId: (n) => `dashboard${n[0]!.toUpperCase()}${n.slice(1)}`,
        bodyErrors: true,
      }),
      ...dashboardPausePaths(),
    },
    webhooks: {
      jobFired: {
        post: {
          summary: "What the job's target receives when it fires (see docs/webhooks.md)",
          parameters: [
            { name: "Duetime-Job-Id", in: "header", required: true, schema: { type: "string" } },
            { name: "Duetime-Attempt", in: "header", required: true, schema: { type: "integer" } },
            {
              name: "Duetime-Timestamp",
              in: "header",
              required: true,
              description: "Unix seconds",
              schema: { type: "integer" },
            },
            {
              name: "Duetime-Signature",
              in: "header",
              required: true,
              description: "v1=hex(HMAC-SHA256(tenant signing secret, timestamp + '.' + raw body))",
              schema: { type: "string" },
            },
          ],
          requestBody: { required: true, content: json(ref("WebhookBody")) },
          responses: {
            "200": { description: "Any 2xx: delivered" },
            "429": {
              description: "5xx, 408 and 429 (and timeouts) are retried; Retry-After is honoured",
            },
            "400": { description: "Any other status: the job is dead at once" },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (dtk_...)" },
        keyQuery: {
          type: "apiKey",
          in: "query",
          name: "key",
          description: "The API key as `?key=`, on GET /v1/events only (for EventSource)",
        },
      },
      schemas: {
        ...SCHEMAS,
        ...SCHEDULE_SCHEMAS,
        ...OPERATION_SCHEMAS,
        ...PAUSE_SCHEMAS,
        ...DASHBOARD_SCHEMAS,
      },
    },
  };
}
