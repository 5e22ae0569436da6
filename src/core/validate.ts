import { Described, InvalidJobError } from "./errors.js";
import type { JsonValue } from "./job.js";

/**
 * Small validators shared by the library, the HTTP API, the MCP tools and the CLI. Each
 * throws InvalidJobError naming the field, what was expected and what was received.
 */

/**
 * What goes before a field name in errors: "" for a lone input, "jobs[3]." for an item of a
 * list. A function is called only when an error needs the name, so a caller validating many
 * items builds no name strings for the valid ones (measured on the bulk schedule path).
 */
export type FieldPrefix = string | (() => string);

export function prefixText(prefix: FieldPrefix): string {
  return typeof prefix === "string" ? prefix : prefix();
}

/** A string rule: length from `min` (default 1) to `max`, optionally a pattern. */
export interface StringRule {
  readonly min?: number;
  readonly max: number;
  readonly pattern?: RegExp;
  readonly patternText?: string;
}

/**
 * A job's target (a handler name or a webhook URL): the one length rule, used by every reader
 * of a target (schedule-input.ts re-exports it beside the other job rules).
 */
export const TARGET_RULE: StringRule = { max: 2048 };

/** What requireObject accepts, as a check that builds nothing. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What requireString accepts, as a check that builds nothing. */
export function isStringOf(value: unknown, rule: StringRule): value is string {
  return (
    typeof value === "string" &&
    value.length >= (rule.min ?? 1) &&
    value.length <= rule.max &&
    (rule.pattern === undefined || rule.pattern.test(value))
  );
}

/** What requireInteger accepts, as a check that builds nothing. */
export function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

export function requireObject(
  value: unknown,
  field: string,
  prefix: FieldPrefix = "",
): Record<string, unknown> {
  if (!isObject(value)) throw new InvalidJobError(prefixText(prefix) + field, "an object", value);
  return value;
}

export function rejectUnknownFields(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  prefix: FieldPrefix,
): void {
  for (const k in obj) {
    if (!Object.hasOwn(obj, k)) continue;
    if (!allowed.includes(k)) {
      throw new InvalidJobError(
        prefixText(prefix) + k,
        `no such field (known fields: ${allowed.join(", ")})`,
        obj[k],
      );
    }
  }
}

export function optionalString(
  value: unknown,
  field: string,
  rule: StringRule,
  prefix: FieldPrefix = "",
): string | undefined {
  if (value === undefined || value === null) return undefined;
  return requireString(value, field, rule, prefix);
}

export function requireString(
  value: unknown,
  field: string,
  rule: StringRule,
  prefix: FieldPrefix = "",
): string {
  if (isStringOf(value, rule)) return value;
  const name = prefixText(prefix) + field;
  const min = rule.min ?? 1;
  if (typeof value !== "string") {
    throw new InvalidJobError(name, `a string of ${min} to ${rule.max} characters`, value);
  }
  if (value.length < min || value.length > rule.max) {
    throw new InvalidJobError(
      name,
      `a string of ${min} to ${rule.max} characters`,
      new Described(`${value.length} characters`),
    );
  }
  // only the pattern is left to fail
  throw new InvalidJobError(
    name,
    rule.patternText ?? `a string matching ${String(rule.pattern)}`,
    value,
  );
}

/** One of `allowed`, or undefined when absent (undefined or null). */
export function optionalOneOf<T extends string>(
  value: unknown,
  field: string,
  allowed: readonly T[],
  prefix: FieldPrefix = "",
): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) {
    return value as T;
  }
  throw new InvalidJobError(prefixText(prefix) + field, `one of ${allowed.join(", ")}`, value);
}

export function optionalInteger(
  value: unknown,
  field: string,
  min: number,
  max: number,
  prefix: FieldPrefix = "",
): number | undefined {
  if (value === undefined || value === null) return undefined;
  return requireInteger(value, field, min, max, prefix);
}

export function requireInteger(
  value: unknown,
  field: string,
  min: number,
  max: number,
  prefix: FieldPrefix = "",
): number {
  if (!isIntegerIn(value, min, max)) {
    throw new InvalidJobError(
      prefixText(prefix) + field,
      `an integer from ${min} to ${max}`,
      value,
    );
  }
  return value;
}

/** Checks that a value is plain JSON and at most `maxBytes` once serialised. */
export function requireJsonPayload(
  value: unknown,
  field: string,
  maxBytes: number,
  prefix: FieldPrefix = "",
): { value: JsonValue; json: string } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new InvalidJobError(
      prefixText(prefix) + field,
      "a JSON-serialisable value",
      (err as Error).message,
    );
  }
  if (text === undefined)
    throw new InvalidJobError(prefixText(prefix) + field, "a JSON value", value);
  // A UTF-16 unit is at most 3 UTF-8 bytes: only texts that might be too long get measured.
  const bytes = text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) {
    throw new InvalidJobError(
      prefixText(prefix) + field,
      `JSON of at most ${maxBytes} bytes`,
      new Described(`${bytes} bytes`),
    );
  }
  // Parsed back so the stored job holds exactly what was stored (Dates as strings, say).
  return { value: JSON.parse(text) as JsonValue, json: text };
}
