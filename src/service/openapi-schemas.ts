import { MAX_TAG_LENGTH, MAX_TAGS } from "../core/tags.js";
import { CHANGE_KINDS } from "../core/change.js";
import { JOB_STATUSES } from "../core/job.js";

/**
 * The schemas of the OpenAPI document (components.schemas) and the pieces its operations
 * share; see openapi.ts.
 */
/** A job's tags (src/core/tags.ts), on create and in Job. */
const TAGS_SCHEMA = {
  type: "array",
  maxItems: MAX_TAGS,
  uniqueItems: true,
  items: { type: "string", minLength: 1, maxLength: MAX_TAG_LENGTH, pattern: "^[^\\s]+$" },
  description: `Labels to find and act on the job by ('user:42'): at most ${MAX_TAGS}, each 1 to ${MAX_TAG_LENGTH} printable characters without spaces, none repeated`,
} as const;

/** A job's outcome callbacks (src/core/callbacks.ts), on create and in Job. */
const CALLBACKS_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: {
    onSuccess: { type: "string", format: "uri", description: "Called when the job succeeds" },
    onFailure: {
      type: "string",
      format: "uri",
      description: "Called after each failed attempt that will be retried",
    },
    onDead: { type: "string", format: "uri", description: "Called when the job is dead" },
  },
  description:
    "Webhook URLs (held to the same rules as target) called when an attempt settles: each call is a signed webhook job of its own, written with the outcome and retried like any delivery; its payload is { event, job }. A cancelled or expired job calls nothing.",
} as const;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: object) => ({ "application/json": { schema } });
export const errorResponse = (description: string) => ({
  description,
  content: json(ref("ErrorBody")),
});
export const jobIdParam = {
  name: "id",
  in: "path",
  required: true,
  description: "Job id (26-character ULID). Another tenant's job answers 404 like a missing one.",
  schema: { type: "string" },
};
/** The answers of the API-key check on every authenticated route. */
export const authErrors = {
  "401": errorResponse("Missing, malformed or revoked API key"),
  "429": {
    description:
      "Rate limit of the key exceeded (`rate-limited`), or on creates a tenant quota " +
      "(`quota-exceeded`, with `quota`: `liveJobs` or `createsPerSecond`, or `openPauses` " +
      "on POST /v1/pauses; nothing was written); retry after `Retry-After` seconds",
    headers: { "Retry-After": { schema: { type: "integer" } } },
    content: json(ref("ErrorBody")),
  },
};
export const etagHeader = {
  ETag: {
    description: 'The job\'s version, quoted ("3"): send it as If-Match',
    schema: { type: "string" },
  },
};

export const SCHEMAS: Record<string, unknown> = {
  JobInput: {
    type: "object",
    additionalProperties: false,
    required: ["target"],
    properties: {
      dueAt: {
        description:
          'When: ISO 8601 with an offset, or without one (a wall time read in timeZone), epoch ms, "in 10 minutes", or "tomorrow 9am" (read in timeZone, in locale\'s language). Exactly one of dueAt and delayMs.',
        oneOf: [{ type: "string" }, { type: "integer" }],
      },
      delayMs: { type: "integer", minimum: 0, description: "Fire this many ms from now" },
      timeZone: {
        type: "string",
        description:
          "IANA zone for a wall-time or natural-language dueAt (default: the service's zone, UTC unless set)",
      },
      locale: {
        type: "string",
        description:
          "Language of a natural-language dueAt: de, en (default), es, fi, fr, it, ja, nl, pt, ru, sv, uk, vi, zh, zh-Hans, zh-Hant",
      },
      target: { type: "string", format: "uri", description: "Webhook URL (http or https)" },
      headers: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "Extra headers sent with the webhook",
      },
      payload: { description: "Any JSON, sent as `payload` (default null; size limited)" },
      key: {
        type: "string",
        description:
          "Idempotency key: while a live job holds it, keyMode says what this request does (200)",
      },
      keyMode: {
        type: "string",
        enum: ["keep", "replace", "debounce"],
        description:
          "keep (default): the live job is returned unchanged; replace: the pending job takes this request's due time, payload, target and options (outcome replaced; 409 too-late if it is firing); debounce: as replace, the due time bounded by maxWaitMs after the first request",
      },
      maxWaitMs: {
        type: "integer",
        minimum: 0,
        description: "With keyMode debounce: fire at most this long after the first request",
      },
      maxAttempts: { type: "integer", minimum: 1, maximum: 1000 },
      expireAfterMs: {
        type: "integer",
        minimum: 0,
        description: "Misfire tolerance: expire instead of firing when this late",
      },
      tags: TAGS_SCHEMA,
      callbacks: CALLBACKS_SCHEMA,
    },
  },
  RescheduleInput: {
    type: "object",
    additionalProperties: false,
    properties: {
      dueAt: { oneOf: [{ type: "string" }, { type: "integer" }] },
      delayMs: { type: "integer", minimum: 0 },
      timeZone: { type: "string" },
      locale: { type: "string" },
    },
  },
  Job: {
    type: "object",
    // Every field is always sent (src/service/job-input.ts jobView); the typed client's
    // generated types rely on that.
    required: [
      "id",
      "tenant",
      "key",
      "status",
      "dueAt",
      "target",
      "headers",
      "payload",
      "attempts",
      "maxAttempts",
      "expireAfterMs",
      "version",
      "lastError",
      "lastResult",
      "createdAt",
      "updatedAt",
      "firedAt",
      "finishedAt",
      "scheduleId",
      "nominal",
      "tags",
      "callbacks",
      "callbackOf",
      "pausedBy",
    ],
    properties: {
      id: { type: "string" },
      tenant: { type: "string" },
      key: { type: ["string", "null"] },
      status: { type: "string", enum: [...JOB_STATUSES] },
      dueAt: { type: "string", format: "date-time" },
      target: { type: "string" },
      headers: { type: ["object", "null"], additionalProperties: { type: "string" } },
      payload: {},
      attempts: { type: "integer" },
      maxAttempts: { type: "integer" },
      expireAfterMs: { type: ["integer", "null"] },
      version: { type: "integer" },
      lastError: {
        type: ["string", "null"],
        description: "Last failure, with the HTTP status when there was one",
      },
      lastResult: { description: "Result of the successful attempt: {status, durationMs}" },
      createdAt: { type: "string", format: "date-time" },
      updatedAt: { type: "string", format: "date-time" },
      firedAt: { type: ["string", "null"], format: "date-time" },
      finishedAt: { type: ["string", "null"], format: "date-time" },
      scheduleId: {
        type: ["string", "null"],
        description: "The recurring series this job is an occurrence of, or null",
      },
      nominal: {
        type: ["string", "null"],
        description:
          "The occurrence's nominal wall time in the series' zone (ISO without offset, '#2' for the second instant of a repeated hour), or null",
      },
      tags: TAGS_SCHEMA,
      callbacks: { ...CALLBACKS_SCHEMA, type: ["object", "null"] },
      callbackOf: {
        type: ["string", "null"],
        description: "For a callback job: the id of the job whose outcome it reports, or null",
      },
      pausedBy: {
        type: ["string", "null"],
        description:
          "The id of the pause holding this pending job (it is not claimed until the pause is resumed), or null",
      },
    },
  },
  JobCount: {
    type: "object",
    required: ["count"],
    properties: { count: { type: "integer", minimum: 0 } },
  },
  JobEnvelope: { type: "object", required: ["job"], properties: { job: ref("Job") } },
  JobCreated: {
    type: "object",
    required: ["created", "outcome", "job"],
    properties: {
      created: { type: "boolean" },
      outcome: {
        type: "string",
        enum: ["created", "existing", "replaced", "too-late"],
        description:
          "created: a new job; existing: the key's live job, unchanged; replaced: the key's pending job took the new definition; too-late (batch items only): the key's job is firing, nothing changed",
      },
      dueAtLocal: {
        type: "string",
        description:
          "The due time with the offset of timeZone (2026-12-03T10:00:00.000+01:00): the zone the request's time was read in",
      },
      timeZone: { type: "string", description: "The request's timeZone, else the service's" },
      job: ref("Job"),
    },
  },
  JobOutcome: {
    type: "object",
    required: ["outcome", "job"],
    properties: {
      outcome: { type: "string", enum: ["cancelled", "rescheduled"] },
      dueAtLocal: {
        type: "string",
        description:
          "With rescheduled: the due time with the offset of timeZone (2026-12-03T10:00:00.000+01:00): the zone the request's time was read in",
      },
      timeZone: {
        type: "string",
        description: "With rescheduled: the request's timeZone, else the service's",
      },
      job: ref("Job"),
    },
  },
  BatchCreated: {
    type: "object",
    required: ["jobs"],
    properties: { jobs: { type: "array", items: ref("JobCreated") } },
  },
  JobPage: {
    type: "object",
    required: ["jobs", "nextCursor"],
    properties: {
      jobs: { type: "array", items: ref("Job") },
      nextCursor: { type: ["string", "null"] },
    },
  },
  Change: {
    type: "object",
    description: "One transition of one job, as the change feed recorded it",
    required: ["cursor", "kind", "id", "status", "dueAt", "attempts", "error", "at"],
    properties: {
      cursor: { type: "string", description: "Pass as `after` to read what came next (opaque)" },
      kind: { type: "string", enum: [...CHANGE_KINDS] },
      id: { type: "string" },
      status: {
        type: "string",
        enum: [...JOB_STATUSES],
        description: "The job's state after the change",
      },
      dueAt: { type: "string", format: "date-time", description: "Its due time after the change" },
      attempts: { type: "integer" },
      error: { type: ["string", "null"] },
      at: { type: "string", format: "date-time", description: "When the change was made" },
    },
  },
  ChangePage: {
    type: "object",
    required: ["changes", "next"],
    properties: {
      changes: { type: "array", items: ref("Change") },
      next: { type: "string", description: "The cursor to read on from (also when empty)" },
    },
  },
  Error: {
    type: "object",
    required: ["code", "field", "expected", "received", "message"],
    properties: {
      code: { type: "string" },
      field: { type: "string" },
      expected: { type: "string" },
      received: { type: "string" },
      message: { type: "string" },
    },
  },
  ErrorBody: { type: "object", required: ["error"], properties: { error: ref("Error") } },
  OutcomeErrorBody: {
    type: "object",
    required: ["error", "job"],
    properties: { error: ref("Error"), outcome: { type: "string" }, job: ref("Job") },
  },
  BatchErrorBody: {
    type: "object",
    required: ["error", "errors"],
    properties: {
      error: ref("Error"),
      errors: {
        type: "array",
        items: {
          type: "object",
          properties: {
            index: { type: "integer" },
            field: { type: "string" },
            expected: { type: "string" },
            received: { type: "string" },
            message: { type: "string" },
          },
        },
      },
    },
  },
  Stats: {
    type: "object",
    properties: {
      counts: { type: "object", additionalProperties: { type: "integer" } },
      bucketWidthMs: { type: "integer" },
      buckets: {
        type: "array",
        items: {
          type: "object",
          properties: {
            bucket: { type: "string", format: "date-time" },
            pending: { type: "integer" },
            overdue: { type: "boolean" },
          },
        },
      },
      pendingBeyondBuckets: { type: "integer" },
      paused: {
        type: "object",
        required: ["jobs", "activePauses"],
        description:
          "Pauses (docs/managing-jobs.md): jobs held now (counted in pending too) and pauses active now",
        properties: {
          jobs: { type: "integer" },
          activePauses: { type: "integer" },
        },
      },
      lateness: {
        type: "object",
        description: "Lateness (ms) of what this server fired in the last hour",
        properties: {
          windowMinutes: { type: "integer" },
          count: { type: "integer" },
          p50: { type: "number" },
          p99: { type: "number" },
          max: { type: "number" },
        },
      },
      perMinute: {
        type: "array",
        items: {
          type: "object",
          properties: {
            minute: { type: "string", format: "date-time" },
            succeeded: { type: "integer" },
            fired: {
              type: "integer",
              deprecated: true,
              description: "The same count as `succeeded` (its old name), kept for one release",
            },
            failed: { type: "integer" },
            dead: { type: "integer" },
            expired: { type: "integer" },
          },
        },
      },
    },
  },
  WebhookBody: {
    type: "object",
    required: ["id", "key", "tenant", "dueAt", "attempt", "payload"],
    properties: {
      id: { type: "string" },
      key: { type: ["string", "null"] },
      tenant: { type: "string" },
      dueAt: { type: "string", format: "date-time" },
      attempt: { type: "integer" },
      payload: {},
    },
  },
};
