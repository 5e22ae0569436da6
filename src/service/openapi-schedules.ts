import { MAX_PREVIEW } from "../core/recurrence/index.js";
import { JOB_STATUSES } from "../core/job.js";
import { MISFIRE_POLICIES, SCHEDULE_STATES } from "../core/series.js";
import { authErrors, errorResponse, json, ref } from "./openapi-schemas.js";

/**
 * The recurring series' part of the OpenAPI document (/v1/schedules): its paths and the
 * schemas they use, merged into openapi.ts's.
 */

const idParam = {
  name: "id",
  in: "path",
  required: true,
  description: "Schedule id (26-character ULID). Another tenant's schedule answers 404.",
  schema: { type: "string" },
};
const ifMatch = {
  name: "If-Match",
  in: "header",
  description: "The ETag read with the schedule: applies only if it is still at that version",
  schema: { type: "string" },
};
const etag = {
  ETag: {
    description: 'The schedule\'s version, quoted ("3"): send it as If-Match',
    schema: { type: "string" },
  },
};
const notFound = errorResponse("No such schedule (or another tenant's)");
const ruleFields = {
  cron: {
    type: "string",
    description:
      'A 5- or 6-field cron expression ("0 9 * * 1-5"; seconds first with six). Exactly one of cron and rrule',
  },
  rrule: {
    type: "string",
    description: 'An RFC 5545 RRULE ("FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9"), RRULE: prefix optional',
  },
  timeZone: {
    type: "string",
    description: "IANA zone the rule's wall times are read in (default: the service's zone)",
  },
  gap: {
    type: "string",
    enum: ["shift", "skip"],
    description:
      "A wall time the clocks skip (spring forward): shift (default) fires it moved by the gap, skip fires nothing",
  },
  overlap: {
    type: "string",
    enum: ["first", "both"],
    description: "A wall time shown twice (fall back): first (default) or both",
  },
};
const time = {
  oneOf: [{ type: "string" }, { type: "integer" }],
  description: "ISO 8601 (with an offset, or a wall time read in timeZone), epoch ms or words",
};
const seriesFields = {
  ...ruleFields,
  start: {
    oneOf: [time, { type: "null" }],
    description: "No occurrence before this (default: now)",
  },
  end: { oneOf: [time, { type: "null" }], description: "No occurrence after this" },
  count: { type: ["integer", "null"], minimum: 1, description: "Most occurrences fired" },
  misfire: {
    type: "string",
    enum: [...MISFIRE_POLICIES],
    description:
      "After downtime: fire-once (default: one occurrence for all missed), fire-all (bounded by misfireLimit) or skip",
  },
  misfireLimit: { type: "integer", minimum: 1, maximum: 10000 },
  misfireToleranceMs: { type: "integer", minimum: 0 },
  target: { type: "string", format: "uri", description: "Webhook URL each occurrence POSTs" },
  headers: {
    type: ["object", "null"],
    additionalProperties: { type: "string" },
    description: "Extra headers sent with each occurrence's webhook",
  },
  payload: { description: "Any JSON, sent as each occurrence's `payload`" },
  maxAttempts: { type: "integer", minimum: 1, maximum: 1000 },
  expireAfterMs: {
    type: ["integer", "null"],
    minimum: 0,
    description: "An occurrence claimed later than this after its time expires instead of firing",
  },
};
const keyField = {
  type: "string",
  description: "Idempotency key: a stored schedule of the tenant holding it is returned (200)",
};

const occurrences = {
  "200": { description: "The next occurrences", content: json(ref("OccurrencePage")) },
  "400": errorResponse("Invalid rule, zone, from or count"),
};

function change(operationId: string, summary: string) {
  return {
    operationId,
    summary,
    parameters: [idParam, ifMatch],
    responses: {
      "200": { description: "Done", headers: etag, content: json(ref("ScheduleEnvelope")) },
      "400": errorResponse("Invalid body or If-Match"),
      "404": notFound,
      "412": {
        description: "The schedule changed since the If-Match version",
        content: json(ref("ScheduleConflictBody")),
      },
      ...authErrors,
    },
  };
}

export const SCHEDULE_PATHS: Record<string, unknown> = {
  "/v1/schedules": {
    post: {
      operationId: "createSchedule",
      summary: "Create a recurring series: only its next occurrence exists as a job",
      requestBody: { required: true, content: json(ref("ScheduleInput")) },
      responses: {
        "201": { description: "Created", headers: etag, content: json(ref("ScheduleCreated")) },
        "200": {
          description: "The idempotency key matched a stored schedule, returned as it is",
          headers: etag,
          content: json(ref("ScheduleCreated")),
        },
        "400": errorResponse("Invalid schedule (cron, rrule, timeZone or another field)"),
        "413": errorResponse("Body too large"),
        "415": errorResponse("Body is not application/json"),
        ...authErrors,
      },
    },
    get: {
      operationId: "listSchedules",
      summary: "List the tenant's schedules in creation order, one page at a time",
      parameters: [
        { name: "state", in: "query", schema: { type: "string", enum: [...SCHEDULE_STATES] } },
        {
          name: "cursor",
          in: "query",
          description: "`nextCursor` of the previous page",
          schema: { type: "string" },
        },
        {
          name: "limit",
          in: "query",
          schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
        },
      ],
      responses: {
        "200": { description: "A page", content: json(ref("SchedulePage")) },
        "400": errorResponse("Invalid query parameter"),
        ...authErrors,
      },
    },
  },
  "/v1/schedules/preview": {
    post: {
      operationId: "previewOccurrences",
      summary: "The next occurrences of a rule and zone not stored",
      requestBody: { required: true, content: json(ref("PreviewInput")) },
      responses: { ...occurrences, "413": errorResponse("Body too large"), ...authErrors },
    },
  },
  "/v1/schedules/{id}": {
    get: {
      operationId: "getSchedule",
      summary: "One schedule",
      parameters: [idParam],
      responses: {
        "200": {
          description: "The schedule",
          headers: etag,
          content: json(ref("ScheduleEnvelope")),
        },
        "404": notFound,
        ...authErrors,
      },
    },
    patch: {
      ...change(
        "updateSchedule",
        "Change the rule or template: the pending occurrence is replaced in the same write",
      ),
      requestBody: { required: true, content: json(ref("SchedulePatch")) },
    },
    delete: change("deleteSchedule", "Delete the schedule; its pending occurrence is cancelled"),
  },
  "/v1/schedules/{id}/pause": {
    post: change("pauseSchedule", "Pause: the pending occurrence is cancelled"),
  },
  "/v1/schedules/{id}/resume": {
    post: change("resumeSchedule", "Resume from the first occurrence after now"),
  },
  "/v1/schedules/{id}/skip": {
    post: change("skipNextOccurrence", "Skip the pending occurrence; the one after it is written"),
  },
  "/v1/schedules/{id}/next": {
    get: {
      operationId: "nextOccurrences",
      summary: "The next occurrences of a stored schedule",
      parameters: [
        idParam,
        {
          name: "count",
          in: "query",
          schema: { type: "integer", minimum: 1, maximum: MAX_PREVIEW, default: 10 },
        },
        {
          name: "from",
          in: "query",
          description: "Occurrences strictly after this time (default: now)",
          schema: { type: "string" },
        },
      ],
      responses: { ...occurrences, "404": notFound, ...authErrors },
    },
  },
};

const nullableTime = { type: ["string", "null"], format: "date-time" };

const SCHEDULE_PROPERTIES: Record<string, unknown> = {
  id: { type: "string" },
  tenant: { type: "string" },
  key: { type: ["string", "null"] },
  cron: { type: ["string", "null"] },
  rrule: { type: ["string", "null"] },
  description: { type: "string", description: "The rule in English, with its zone" },
  timeZone: { type: "string" },
  gap: { type: "string", enum: ["shift", "skip"] },
  overlap: { type: "string", enum: ["first", "both"] },
  misfire: { type: "string", enum: [...MISFIRE_POLICIES] },
  misfireLimit: { type: "integer" },
  misfireToleranceMs: { type: "integer" },
  start: nullableTime,
  end: nullableTime,
  count: { type: ["integer", "null"] },
  target: { type: "string" },
  headers: { type: ["object", "null"], additionalProperties: { type: "string" } },
  payload: {},
  maxAttempts: { type: "integer" },
  expireAfterMs: { type: ["integer", "null"] },
  state: { type: "string", enum: [...SCHEDULE_STATES] },
  version: { type: "integer" },
  nextJobId: { type: ["string", "null"], description: "The pending occurrence's job" },
  nextAt: nullableTime,
  nextAtLocal: {
    type: ["string", "null"],
    description: "nextAt with the offset of timeZone (2026-12-03T09:00:00.000+01:00)",
  },
  nextNominal: {
    type: ["string", "null"],
    description: "The wall time the rule named for the pending occurrence",
  },
  firedCount: { type: "integer" },
  missedCount: { type: "integer", description: "Occurrences the misfire policy skipped" },
  lastMisfireAt: nullableTime,
  lastOutcome: {
    type: ["object", "null"],
    required: ["jobId", "status"],
    properties: {
      jobId: { type: "string" },
      status: { type: "string", enum: [...JOB_STATUSES] },
    },
  },
  createdAt: { type: "string", format: "date-time" },
  updatedAt: { type: "string", format: "date-time" },
  endedReason: {
    type: ["string", "null"],
    description:
      "Why the series ended when a claim could not advance it (its stored rule no longer compiles); null otherwise",
  },
};

export const SCHEDULE_SCHEMAS: Record<string, unknown> = {
  ScheduleInput: {
    type: "object",
    additionalProperties: false,
    required: ["target"],
    properties: { key: keyField, ...seriesFields },
  },
  SchedulePatch: {
    type: "object",
    additionalProperties: false,
    description: "The fields to change; null clears start, end, count or headers",
    properties: seriesFields,
  },
  PreviewInput: {
    type: "object",
    additionalProperties: false,
    properties: {
      ...ruleFields,
      from: { ...time, description: "Occurrences strictly after this (default: now)" },
      count: { type: "integer", minimum: 1, maximum: MAX_PREVIEW, description: "Default 10" },
    },
  },
  Schedule: {
    type: "object",
    // Every field is always sent (src/api/schedule-view.ts); the typed client relies on it.
    required: Object.keys(SCHEDULE_PROPERTIES),
    properties: SCHEDULE_PROPERTIES,
  },
  ScheduleEnvelope: {
    type: "object",
    required: ["schedule"],
    properties: {
      deleted: { type: "boolean", description: "DELETE: true; the schedule as it was" },
      schedule: ref("Schedule"),
    },
  },
  ScheduleCreated: {
    type: "object",
    required: ["created", "schedule"],
    properties: { created: { type: "boolean" }, schedule: ref("Schedule") },
  },
  SchedulePage: {
    type: "object",
    required: ["schedules", "nextCursor"],
    properties: {
      schedules: { type: "array", items: ref("Schedule") },
      nextCursor: { type: ["string", "null"] },
    },
  },
  ScheduleConflictBody: {
    type: "object",
    required: ["error"],
    properties: { error: ref("Error"), outcome: { type: "string" }, schedule: ref("Schedule") },
  },
  Occurrence: {
    type: "object",
    required: ["at", "atLocal", "nominal", "mapping"],
    properties: {
      at: { type: "string", format: "date-time" },
      atLocal: { type: "string", description: "at with the offset of the zone" },
      nominal: {
        type: "string",
        description: "The wall time the rule named (ISO without offset)",
      },
      mapping: {
        type: "string",
        enum: ["exact", "gap-shifted", "overlap-first", "overlap-second"],
        description: "How the wall time became the instant (docs/recurring.md)",
      },
    },
  },
  OccurrencePage: {
    type: "object",
    required: ["timeZone", "occurrences"],
    properties: {
      timeZone: { type: "string" },
      occurrences: { type: "array", items: ref("Occurrence") },
    },
  },
};
