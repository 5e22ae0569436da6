import type { JsonValue } from "../core/job.js";
import { InvalidJobError } from "../core/errors.js";
import { JOB_STATUSES, type JobStatus } from "../core/job.js";

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

/** A repeatable flag's values (`--tag a --tag b`), for commander's option parser. */
export function collect(value: string, acc: string[] = []): string[] {
  return [...acc, value];
}

/** `--payload '<json>'`. */
export function parsePayload(raw: string): JsonValue {
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    throw new InvalidJobError("--payload", "JSON (e.g. '{\"user\":42}')", raw);
  }
}

/** `--status pending,dead`: one state or several, comma-separated. */
export function parseStatuses(raw: string): JobStatus[] {
  const list = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const s of list) {
    if (!JOB_STATUSES.includes(s as JobStatus)) {
      throw new InvalidJobError("--status", `one of ${JOB_STATUSES.join(", ")}`, s);
    }
  }
  if (list.length === 0) {
    throw new InvalidJobError("--status", `one of ${JOB_STATUSES.join(", ")}`, raw);
  }
  return list as JobStatus[];
}
