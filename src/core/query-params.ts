import { Described, InvalidJobError } from "./errors.js";
import { MAX_TIME_ZONE } from "./time-input.js";
import { requireObject, requireString } from "./validate.js";

/**
 * Query strings, read by rules as bodies are (same validators, same errors): every parameter
 * is known, given once unless it is a list, bounded in length, and an enum value is looked up
 * in a Set, never as a property of a plain object (`zoom=constructor` is not a zoom).
 * Fastify hands a repeated parameter over as an array; a rule decides what that means. An
 * empty value (`?status=`) counts as absent.
 */
export type ParamRule =
  /** One string of 1 to `max` characters. */
  | { readonly kind: "text"; readonly max: number }
  /** One integer in [min, max], written in decimal digits. */
  | { readonly kind: "int"; readonly min: number; readonly max: number }
  /** One of `of`. */
  | { readonly kind: "enum"; readonly of: readonly string[] }
  /** Repeated and/or comma-separated values, each one of `of`. */
  | { readonly kind: "list"; readonly of: readonly string[] }
  /** A time: epoch-ms digits become a number; other text is left for parseDueTime. */
  | { readonly kind: "time" }
  /** An IANA zone name (checked when a time is read in it). */
  | { readonly kind: "zone" };

export type QuerySpec = Readonly<Record<string, ParamRule>>;

type ValueOf<R extends ParamRule> = R extends { kind: "int" }
  ? number
  : R extends { kind: "list"; of: readonly (infer T)[] }
    ? T[]
    : R extends { kind: "enum"; of: readonly (infer T)[] }
      ? T
      : R extends { kind: "time" }
        ? number | string
        : string;

export type QueryOf<S extends QuerySpec> = { -readonly [K in keyof S]?: ValueOf<S[K]> };

const compiled = new WeakMap<ParamRule, ReadonlySet<string>>();

function allowed(rule: ParamRule & { of: readonly string[] }): ReadonlySet<string> {
  let set = compiled.get(rule);
  if (!set) {
    set = new Set(rule.of);
    compiled.set(rule, set);
  }
  return set;
}

/** Most values a list parameter takes (repeated and comma-separated together). */
const MAX_LIST_VALUES = 32;
/** Longest raw text of a list parameter, before it is split. */
const MAX_LIST_TEXT = 512;

/** Reads `raw` (a parsed query string) by `spec`; throws InvalidJobError naming the parameter. */
export function readQuery<S extends QuerySpec>(raw: unknown, spec: S): QueryOf<S> {
  const q = requireObject(raw ?? {}, "query");
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(q)) {
    // An empty value is an absent one, as an HTML form sends a field left blank.
    if (q[name] === "") continue;
    const rule = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (rule === undefined) {
      throw new InvalidJobError(
        name,
        `no such parameter (known: ${Object.keys(spec).join(", ")})`,
        q[name],
      );
    }
    out[name] = readParam(q[name], name, rule);
  }
  return out as QueryOf<S>;
}

function readParam(value: unknown, name: string, rule: ParamRule): unknown {
  if (rule.kind === "list") return readList(value, name, rule);
  if (Array.isArray(value)) {
    throw new InvalidJobError(name, "one value", new Described(`${value.length} values`));
  }
  switch (rule.kind) {
    case "text":
      return requireString(value, name, { max: rule.max });
    case "zone":
      return requireString(value, name, { max: MAX_TIME_ZONE });
    case "int": {
      const expected = `an integer from ${rule.min} to ${rule.max}`;
      // 16 digits cover every safe integer; a longer text is not one, whatever it says.
      const n = typeof value === "string" && /^-?\d{1,16}$/.test(value) ? Number(value) : NaN;
      if (!Number.isSafeInteger(n) || n < rule.min || n > rule.max) {
        throw new InvalidJobError(name, expected, value);
      }
      return n;
    }
    case "enum": {
      const text = requireString(value, name, { max: 64 });
      if (!allowed(rule).has(text)) {
        throw new InvalidJobError(name, `one of ${rule.of.join(", ")}`, text);
      }
      return text;
    }
    case "time":
      // parseDueTime bounds the text (MAX_TIME_TEXT) and says so in its own words
      if (typeof value !== "string") throw new InvalidJobError(name, "a time", value);
      return /^\d{1,16}$/.test(value) ? Number(value) : value;
  }
}

function readList(value: unknown, name: string, rule: ParamRule & { kind: "list" }): string[] {
  const texts = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const t of texts) {
    const text = requireString(t, name, { max: MAX_LIST_TEXT });
    for (const part of text.split(",")) {
      const v = part.trim();
      if (!allowed(rule).has(v)) {
        throw new InvalidJobError(name, `one of ${rule.of.join(", ")}`, v);
      }
      if (out.length === MAX_LIST_VALUES) {
        throw new InvalidJobError(name, `at most ${MAX_LIST_VALUES} values`, new Described("more"));
      }
      out.push(v);
    }
  }
  return out;
}
