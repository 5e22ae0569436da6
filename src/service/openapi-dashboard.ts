import { SCHEDULE_STATES } from "../core/series.js";
import { ZOOMS } from "../dashboard/bins.js";
import { authErrors, errorResponse, etagHeader, jobIdParam, json, ref } from "./openapi-schemas.js";

/**
 * The dashboard's part of the OpenAPI document (src/dashboard/plugin.ts, mounted by
 * server.ts): the static page, its data endpoints and the live stream. Jobs are in the one
 * JSON view of a job (the `Job` schema of /v1/jobs, ISO times); the chart and activity views
 * and the live changes carry times as epoch milliseconds.
 */

const str = { type: "string" };
const int = { type: "integer" };
const epochMs = { type: "integer", description: "Epoch milliseconds (UTC)" };
const query = (name: string, description: string, schema: object = str) => ({
  name,
  in: "query",
  description,
  schema,
});
const ifMatch = {
  name: "If-Match",
  in: "header",
  description: 'The ETag read with the job ("3"): applies only if the job is still at that version',
  schema: str,
};
const scheduleIdParam = {
  name: "id",
  in: "path",
  required: true,
  description: "Series id (26-character ULID). Another tenant's answers 404 like a missing one.",
  schema: str,
};
const scheduleIfMatch = {
  ...ifMatch,
  description: 'The ETag read with the series ("3"): applies only if it is still at that version',
};
const outcomes = {
  "200": { description: "Done", content: json(ref("DashboardOutcome")) },
  "400": errorResponse("Invalid body or If-Match (the field, what was expected, what came in)"),
  "404": errorResponse("No such job (or another tenant's)"),
  "409": {
    description:
      "Too late (the job is firing or finished; retry: not dead), or another live job holds its key",
    content: json(ref("DashboardOutcomeError")),
  },
  "412": {
    description: "The job changed since the If-Match version",
    content: json(ref("DashboardOutcomeError")),
  },
  "413": errorResponse("Body too large"),
  "415": errorResponse("Body is not application/json"),
  ...authErrors,
};
const moveBody = (required: boolean, dueAt: string) => ({
  required,
  content: json({
    type: "object",
    additionalProperties: false,
    ...(required ? { required: ["dueAt"] } : {}),
    properties: {
      dueAt: { description: dueAt, oneOf: [str, int] },
      timeZone: { type: "string", description: "IANA zone for natural-language dueAt" },
      expectedVersion: { type: "integer", description: "Same as If-Match" },
    },
  }),
});

export const DASHBOARD_PATHS: Record<string, unknown> = {
  "/": {
    get: {
      operationId: "dashboardPage",
      summary: "The web dashboard (static; it asks for the API key and sends it on each call)",
      security: [],
      responses: {
        "200": { description: "index.html", content: { "text/html": { schema: str } } },
        "503": {
          description: "The front end is not built (`npm run build`)",
          content: { "text/plain": { schema: str } },
        },
      },
    },
  },
  "/assets/{name}": {
    get: {
      operationId: "dashboardAsset",
      summary: "A content-hashed file of the dashboard's front end (cached as immutable)",
      security: [],
      parameters: [{ name: "name", in: "path", required: true, schema: str }],
      responses: {
        "200": { description: "The file", content: { "*/*": { schema: str } } },
        "404": { description: "No such file", content: { "text/plain": { schema: str } } },
      },
    },
  },
  "/v1/dashboard/future": {
    get: {
      operationId: "dashboardFuture",
      summary: "Pending jobs per display bin from the current bucket forward (store counters)",
      parameters: [
        query("zoom", "Window from the current bucket (default 1d)", {
          type: "string",
          enum: Object.keys(ZOOMS),
        }),
        query("from", "Explicit window start instead (epoch ms, ISO time or e.g. in 2 hours)"),
        query("to", "Explicit window end (at most 400 days after from)"),
        query("bins", "Most bins wanted", { type: "integer", minimum: 1, maximum: 1000 }),
      ],
      responses: {
        "200": { description: "The future", content: json(ref("DashboardFuture")) },
        "400": errorResponse("Invalid parameter"),
        ...authErrors,
      },
    },
  },
  "/v1/dashboard/now": {
    get: {
      operationId: "dashboardNow",
      summary: "Backlog, in flight, oldest overdue, dead today, and what this process fired",
      parameters: [
        query("minutes", "Minutes of activity (default 30)", {
          type: "integer",
          minimum: 1,
          maximum: 60,
        }),
      ],
      responses: {
        "200": { description: "Now", content: json(ref("DashboardNow")) },
        "400": errorResponse("Invalid parameter"),
        ...authErrors,
      },
    },
  },
  "/v1/dashboard/jobs": {
    get: {
      operationId: "dashboardJobs",
      summary:
        "Search by id or idempotency key, or a page of jobs in due order (by tag: in id order)",
      parameters: [
        query("q", "A job id, or a live job's idempotency key"),
        query("status", "One or more states, comma-separated"),
        query("dueFrom", "Due at or after"),
        query("dueTo", "Due before (exclusive)"),
        query("timeZone", "IANA zone for natural-language bounds"),
        query(
          "tag",
          "Only jobs carrying this tag, read from the tag index; the page is then in job id order",
        ),
        query("cursor", "`nextCursor` of the previous page"),
        query("limit", "Page size (default 25)", { type: "integer", minimum: 1, maximum: 200 }),
      ],
      responses: {
        "200": { description: "A page", content: json(ref("DashboardJobPage")) },
        "400": errorResponse("Invalid parameter"),
        ...authErrors,
      },
    },
  },
  "/v1/dashboard/jobs/{id}": {
    get: {
      operationId: "dashboardJob",
      summary: "One job (the one JSON view of a job, as GET /v1/jobs/{id})",
      parameters: [jobIdParam],
      responses: {
        "200": {
          description: "The job",
          headers: etagHeader,
          content: json({
            type: "object",
            required: ["job"],
            properties: { job: ref("Job") },
          }),
        },
        "404": errorResponse("No such job (or another tenant's)"),
        ...authErrors,
      },
    },
  },
  "/v1/dashboard/jobs/{id}/cancel": {
    post: {
      operationId: "dashboardCancel",
      summary: "Cancel a pending job (any body is ignored)",
      parameters: [jobIdParam],
      responses: outcomes,
    },
  },
  "/v1/dashboard/jobs/{id}/reschedule": {
    post: {
      operationId: "dashboardReschedule",
      summary: "Snooze a pending job to a new due time",
      parameters: [jobIdParam, ifMatch],
      requestBody: moveBody(true, "The new due time (ISO, epoch ms, or e.g. in 2 hours)"),
      responses: outcomes,
    },
  },
  "/v1/dashboard/jobs/{id}/retry": {
    post: {
      operationId: "dashboardRetry",
      summary: "Put a dead job back to pending",
      parameters: [jobIdParam, ifMatch],
      requestBody: moveBody(false, "When to fire it again (default now)"),
      responses: outcomes,
    },
  },
  "/v1/dashboard/schedules": {
    get: {
      operationId: "dashboardSchedules",
      summary: "A page of the tenant's recurring series in creation order, for the schedules page",
      parameters: [
        query("state", "Only series in this state", {
          type: "string",
          enum: [...SCHEDULE_STATES],
        }),
        query("cursor", "`nextCursor` of the previous page"),
        query("limit", "Page size (default 50)", { type: "integer", minimum: 1, maximum: 200 }),
      ],
      responses: {
        "200": { description: "A page", content: json(ref("DashboardSchedulePage")) },
        "400": errorResponse("Invalid parameter"),
        ...authErrors,
      },
    },
  },
  "/v1/dashboard/schedules/{id}": {
    get: {
      operationId: "dashboardSchedule",
      summary: "One recurring series as the schedules page shows it",
      parameters: [scheduleIdParam],
      responses: {
        "200": {
          description: "The series",
          headers: etagHeader,
          content: json({
            type: "object",
            required: ["schedule"],
            properties: { schedule: ref("DashboardSchedule") },
          }),
        },
        "404": errorResponse("No such series (or another tenant's)"),
        ...authErrors,
      },
    },
  },
  ...Object.fromEntries(
    (["pause", "resume"] as const).map((verb) => [
      `/v1/dashboard/schedules/{id}/${verb}`,
      {
        post: {
          operationId: verb === "pause" ? "dashboardPauseSchedule" : "dashboardResumeSchedule",
          summary:
            verb === "pause"
              ? "Pause a series: its pending occurrence is cancelled (any body is ignored)"
              : "Resume a paused series from its first occurrence after now (any body is ignored)",
          parameters: [scheduleIdParam, scheduleIfMatch],
          responses: {
            "200": {
              description: "Done (a series already in that state is answered as it is)",
              headers: etagHeader,
              content: json(ref("DashboardScheduleOutcome")),
            },
            "400": errorResponse("Invalid If-Match"),
            "404": errorResponse("No such series (or another tenant's)"),
            "412": {
              description: "The series changed since the If-Match version; nothing changed",
              headers: etagHeader,
              content: json(ref("DashboardScheduleOutcomeError")),
            },
            "413": errorResponse("Body too large"),
            "415": errorResponse("Body is not application/json"),
            ...authErrors,
          },
        },
      },
    ]),
  ),
  "/v1/events": {
    get: {
      operationId: "events",
      summary: "Server-Sent Events stream of the tenant's job changes (see docs/dashboard.md)",
      description:
        "The durable change feed of /v1/changes, live: every transition of every job of the " +
        "tenant, made by any node sharing the store, in feed order. Frames: `id: <cursor>` + " +
        "`event: hello` once (data: tenant, now, cursor: where the stream starts), then " +
        "`id: <cursor>` + `event: job` per change (data: the change with times in epoch ms), " +
        "`event: reset` when the stream fell behind the feed's retention (reload the view), " +
        "and `: heartbeat` comments. Each id is the change's feed cursor: reconnecting with " +
        "`Last-Event-ID` (or `?after=`) resumes with no gap and no repeat while the feed keeps " +
        "the changes (`changeRetentionMs`); an older cursor answers 410 as /v1/changes does. " +
        "A stream whose key is revoked gets `event: revoked` and ends (keys are re-checked " +
        "every 2 s). The key may come as `?key=` for EventSource, which cannot set headers; a " +
        "URL can end up in logs and history, so prefer the header.",
      security: [{ bearer: [] }, { keyQuery: [] }],
      parameters: [
        {
          name: "Last-Event-ID",
          in: "header",
          description: "The last `id:` seen (a feed cursor): the stream resumes after it",
          schema: str,
        },
        query(
          "after",
          "A feed cursor to resume after (a change's `cursor`, a /v1/changes page's `next`); " +
            "Last-Event-ID wins when both are given",
        ),
      ],
      responses: {
        "200": {
          description: "The stream (stays open)",
          content: { "text/event-stream": { schema: str } },
        },
        "400": errorResponse(
          "Invalid Last-Event-ID or after: not a cursor, or past the feed's head (the field says which)",
        ),
        "410": errorResponse(
          "Changes after the cursor were removed by retention (`oldest` says where to resume)",
        ),
        ...authErrors,
        "429": {
          description:
            "Rate limit of the key exceeded, or the key has its most streams open " +
            "(`too-many-streams`, default 10); retry after `Retry-After` seconds",
          headers: { "Retry-After": { schema: int } },
          content: json(ref("ErrorBody")),
        },
        "503": {
          description:
            "The server has its most streams open (default 1,000), or the feed cannot be read " +
            "now; retry after `Retry-After`",
          headers: { "Retry-After": { schema: int } },
          content: json(ref("ErrorBody")),
        },
      },
    },
  },
};

const ms = { type: "number", description: "Milliseconds" };

const isoOrNull = { type: ["string", "null"], description: "ISO 8601 time" };

export const DASHBOARD_SCHEMAS: Record<string, unknown> = {
  DashboardSchedule: {
    type: "object",
    description: "A recurring series as the schedules page shows it (src/dashboard/schedules.ts)",
    properties: {
      id: str,
      key: { type: ["string", "null"] },
      cron: { type: ["string", "null"] },
      rrule: { type: ["string", "null"] },
      description: { type: "string", description: "The rule in words, with its zone" },
      timeZone: str,
      state: { type: "string", enum: [...SCHEDULE_STATES] },
      version: int,
      target: str,
      nextJobId: { type: ["string", "null"] },
      nextOccurrences: {
        type: "array",
        description: "The pending occurrence and the four after it; empty unless active",
        items: {
          type: "object",
          properties: {
            at: { type: "string", description: "ISO 8601, UTC" },
            atLocal: { type: "string", description: "ISO 8601 with the zone's offset" },
          },
        },
      },
      firedCount: int,
      missedCount: int,
      lastOutcome: {
        type: ["object", "null"],
        description: "The last claimed occurrence's job and its state",
        properties: { jobId: str, status: str },
      },
      createdAt: isoOrNull,
      updatedAt: isoOrNull,
    },
  },
  DashboardSchedulePage: {
    type: "object",
    required: ["schedules", "nextCursor"],
    properties: {
      schedules: { type: "array", items: ref("DashboardSchedule") },
      nextCursor: { type: ["string", "null"] },
    },
  },
  DashboardScheduleOutcome: {
    type: "object",
    required: ["outcome", "schedule"],
    properties: {
      outcome: { type: "string", enum: ["paused", "resumed"] },
      schedule: ref("DashboardSchedule"),
    },
  },
  DashboardScheduleOutcomeError: {
    type: "object",
    required: ["error", "outcome", "schedule"],
    properties: { error: ref("Error"), outcome: str, schedule: ref("DashboardSchedule") },
  },
  DashboardOutcome: {
    type: "object",
    required: ["outcome", "job"],
    properties: {
      outcome: { type: "string", enum: ["cancelled", "rescheduled"] },
      job: ref("Job"),
    },
  },
  DashboardOutcomeError: {
    type: "object",
    required: ["error", "outcome", "job"],
    properties: {
      error: ref("Error"),
      outcome: str,
      job: ref("Job"),
      // key-conflict: the live job holding the key
      holder: ref("Job"),
    },
  },
  DashboardJobPage: {
    type: "object",
    required: ["jobs", "nextCursor"],
    properties: {
      jobs: { type: "array", items: ref("Job") },
      nextCursor: { type: ["string", "null"] },
      match: { type: ["string", "null"], enum: ["id", "key", null], description: "With q" },
    },
  },
  DashboardFuture: {
    type: "object",
    properties: {
      now: epochMs,
      bucketWidthMs: int,
      binMs: int,
      from: epochMs,
      to: epochMs,
      bins: {
        type: "array",
        items: { type: "object", properties: { start: epochMs, pending: int } },
      },
      total: { type: "integer", description: "Pending jobs in the window" },
      overdue: { type: "integer", description: "Pending jobs in buckets before the current one" },
    },
  },
  DashboardNow: {
    type: "object",
    properties: {
      now: epochMs,
      minutes: {
        type: "array",
        description: "Outcomes of what this process ran, per minute, oldest first",
        items: {
          type: "object",
          properties: {
            minute: epochMs,
            succeeded: int,
            fired: {
              ...int,
              deprecated: true,
              description: "The same count as `succeeded` (its old name), kept for one release",
            },
            failed: int,
            dead: int,
            expired: int,
            latenessP50: ms,
            latenessP99: ms,
            latenessMax: ms,
          },
        },
      },
      lateness: {
        type: "object",
        properties: { count: int, p50: ms, p99: ms, max: ms },
      },
      counts: { type: "object", additionalProperties: int },
      backlog: int,
      inFlight: int,
      oldestOverdue: {
        type: ["object", "null"],
        properties: { id: str, dueAt: epochMs, lateByMs: int },
      },
      deadLastDay: { type: "object", properties: { count: int, since: epochMs } },
    },
  },
};
