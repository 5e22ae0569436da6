import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { InvalidJobError, QuotaExceededError, describeReceived } from "../core/errors.js";
import { STORAGE_FULL_RETRY_AFTER_S, storageFullFault } from "../http/storage-full.js";

/**
 * Library field names as the MCP tools name them. The library's validator is the one
 * validator (schedule-input.ts, time-input.ts, list-query.ts); its errors are re-labelled
 * here so a model reads the name of the argument it actually sent.
 */
const TOOL_FIELDS: Readonly<Record<string, string>> = {
  dueAt: "scheduled_at",
  // a series' start (task.create and task.reschedule with recurrence)
  start: "scheduled_at",
  timeZone: "timezone",
  locale: "locale",
  target: "webhook_url",
  targetOptions: "webhook_headers",
  key: "idempotency_key",
  keyMode: "key_mode",
  maxWaitMs: "max_wait_ms",
  maxAttempts: "max_attempts",
  expireAfterMs: "expire_after_ms",
  expectedVersion: "expected_version",
  dueFrom: "due_from",
  dueTo: "due_to",
};

export function toolField(field: string): string {
  // own properties only: a field named "constructor" (an unknown argument) is itself
  return Object.hasOwn(TOOL_FIELDS, field) ? TOOL_FIELDS[field]! : field;
}

/** `field: expected X, received Y`, the wording of every duetime validation error. */
export function invalidText(field: string, expected: string, received: unknown): string {
  return `${field}: expected ${expected}, received ${describeReceived(received)}`;
}

/** A tool error result (isError: true): the model sees the text and can correct its call. */
export function toolError(text: string, structured?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text }],
    ...(structured === undefined ? {} : { structuredContent: structured }),
  };
}

/**
 * Runs a tool body; bad input (InvalidJobError from the shared validator) becomes a tool
 * error naming the tool's own field, a tenant over its quota one saying when to try again,
 * and a write refused for lack of space one saying so. Anything else is a real failure and
 * propagates: the SDK turns it into an error result without leaking a stack.
 */
export async function withInputErrors(
  body: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof InvalidJobError) {
      return toolError(invalidText(toolField(err.field), err.expected, err.received), {
        error: "invalid-input",
        field: toolField(err.field),
        expected: err.expected,
        received: describeReceived(err.received),
      });
    }
    if (err instanceof QuotaExceededError) {
      const seconds = Math.max(1, Math.ceil(err.retryAfterMs / 1000));
      return toolError(`${err.message}; nothing was created, try again in ${seconds} s`, {
        error: "quota-exceeded",
        quota: err.quota,
        expected: err.expected,
        received: err.received,
        retry_after_seconds: seconds,
      });
    }
    const full = storageFullFault(err);
    if (full) {
      // Not the model's input and not a bug: the server cannot write now; say so plainly.
      return toolError(full.message, {
        error: full.code,
        retry_after_seconds: STORAGE_FULL_RETRY_AFTER_S,
      });
    }
    throw err;
  }
}
