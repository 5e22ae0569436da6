import { Described, InvalidJobError } from "./errors.js";
import type { JsonValue } from "./job.js";

/**
 * Small validators shared by the library, the HTTP API, the MCP tools and the CLI. Each
 * throws InvalidJobError naming the field, what was expected and what was received.
 */

export function requireObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidJobError(field, "an object", value);
  }
  return value as Record<string, unknown>;
}

export function rejectUnknownFields(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  prefix: string,
): void {
  for (const k in obj) {
    if (!Object.hasOwn(obj, k)) continue;
    if (!allowed.includes(k)) {
      throw new InvalidJobError(
        `${prefix}${k}`,
        `no such field (known fields: ${allowed.join(", ")})`,
        obj[k],
      );
    }
  }
}

export function optionalString(
  value: unknown,
  field: string,
  rule: { min?: number; max: number; pattern?: RegExp; patternText?: string },
): string | undefined {
  if (value === undefined || value === null) return undefined;
  return requireString(value, field, rule);
}

export function requireString(
  value: unknown,
  field: string,
  rule: { min?: number; max: number; pattern?: RegExp; patternText?: string },
): string {
  const min = rule.min ?? 1;
  if (typeof value !== "string") {
    throw new InvalidJobError(field, `a string of ${min} to ${rule.max} characters`, value);
  }
  if (value.length < min || value.length > rule.max) {
    throw new InvalidJobError(
      field,
      `a string of ${min} to ${rule.max} characters`,
      new Described(`${value.length} characters`),
    );
  }
  if (rule.pattern && !rule.pattern.test(value)) {
    throw new InvalidJobError(
      field,
      rule.patternText ?? `a string matching ${rule.pattern}`,
      value,
    );
  }
  return value;
}

export function optionalInteger(
  value: unknown,
  field: string,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined || value === null) return undefined;
  return requireInteger(value, field, min, max);
}

export function requireInteger(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidJobError(field, `an integer from ${min} to ${max}`, value);
  }
  return value;
}

/** Checks that a value is plain JSON and at most `maxBytes` once serialised. */
export function requireJsonPayload(
  value: unknown,
  field: string,
  maxBytes: number,
): { value: JsonValue; json: string } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new InvalidJobError(field, "a JSON-serialisable value", (err as Error).message);
  }
  if (text === undefined) throw new InvalidJobError(field, "a JSON value", value);
  // A UTF-16 unit is at most 3 UTF-8 bytes: only texts that might be too long get measured.
  const bytes = text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) {
    throw new InvalidJobError(
      field,
      `JSON of at most ${maxBytes} bytes`,
      new Described(`${bytes} bytes`),
    );
  }
  // Parsed back so the stored job holds exactly what was stored (Dates as strings, say).
  return { value: JSON.parse(text) as JsonValue, json: text };
}
