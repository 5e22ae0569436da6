import type { JsonValue } from "../core/job.js";
import { InvalidJobError } from "../core/errors.js";

/**
 * Readers of option values shared by the commands that create work (`add`, `schedule add`):
 * one wording of each refusal, naming the flag as the user typed it.
 */

/** `--header name:value`, repeated: the webhook headers, names and values trimmed. */
export function parseHeaders(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of raw) {
    const i = h.indexOf(":");
    if (i <= 0) throw new InvalidJobError("--header", "name:value", h);
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  return headers;
}

/** `--payload '<json>'`. */
export function parsePayload(raw: string): JsonValue {
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    throw new InvalidJobError("--payload", "JSON (e.g. '{\"user\":42}')", raw);
  }
}
