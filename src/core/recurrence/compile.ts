import { InvalidJobError } from "../errors.js";
import { assertTimeZone } from "../time-input.js";
import { isObject } from "../validate.js";
import { zonedWallTimeToInstant } from "../wall-time.js";
import { cachedOffsetMinutes } from "../zone-offsets.js";
import { compileCron } from "./cron-rule.js";
import { parseRrule } from "./rrule-parse.js";
import { compileRrule } from "./rrule-rule.js";
import {
  GAP_POLICIES,
  MAX_COUNT,
  MAX_PREVIEW,
  MAX_RULE_TEXT,
  OVERLAP_POLICIES,
  type GapPolicy,
  type Occurrence,
  type OverlapPolicy,
  type Recurrence,
  type RecurrenceSpec,
  ruleFromParts,
  ruleParts,
} from "./types.js";
import { neverMatches, type FieldSpec, type WallSequence } from "./wall-sequence.js";
import { nextOccurrence } from "./zone-mapping.js";

/**
 * Compiled rules kept (least recently used first out): a node firing many series of few
 * rules. The one cache of compiled rules, the series' included (core/series.ts).
 */
const CACHE_SIZE = 10_000;
const cache = new Map<string, Recurrence>();
/**
 * Parsed rule texts (croner's parse and the field tables, an RRULE's plan), kept apart from
 * the compiled rules because a series' spec carries its own start: a million series of the
 * same few rules are a million specs (each a miss of `cache` once it is full) but a handful
 * of plans, and the plan is most of a compile's cost (bench/series.ts, bench/recurrence.ts).
 * A cron plan depends on the text alone; an RRULE's on its text, zone and start's wall time.
 */
const plans = new Map<string, Plan>();

/** `map`'s entry for `key`, made by `make` on a miss; least recently used first out. */
function cached<T>(map: Map<string, T>, key: string | null, make: () => T): T {
  const hit = key === null ? undefined : map.get(key);
  if (hit !== undefined) {
    map.delete(key!);
    map.set(key!, hit);
    return hit;
  }
  const made = make();
  if (key !== null) {
    if (map.size >= CACHE_SIZE) map.delete(map.keys().next().value!);
    map.set(key, made);
  }
  return made;
}

const RULE_TEXT =
  'an object with cron (e.g. "0 9 * * 1-5") or rrule (e.g. "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9")';

/** The rule's text and which kind it is, checked (exactly one of cron and rrule). */
export function ruleText(rule: unknown, field = "rule"): { kind: "cron" | "rrule"; text: string } {
  if (!isObject(rule)) throw new InvalidJobError(field, RULE_TEXT, rule);
  const hasCron = rule.cron !== undefined;
  const hasRrule = rule.rrule !== undefined;
  if (hasCron === hasRrule) throw new InvalidJobError(field, `${RULE_TEXT}, not both`, rule);
  const kind = hasCron ? "cron" : "rrule";
  const text = rule[kind];
  if (typeof text !== "string" || text.trim() === "" || text.length > MAX_RULE_TEXT) {
    throw new InvalidJobError(kind, `a string of 1 to ${MAX_RULE_TEXT} characters`, text);
  }
  return { kind, text };
}

function optionalInstant(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidJobError(field, "an instant in epoch milliseconds", value);
  }
  return value;
}

function policy<T extends string>(
  value: unknown,
  allowed: readonly T[],
  field: string,
): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly unknown[]).includes(value)) {
    throw new InvalidJobError(field, `one of ${allowed.map((a) => `"${a}"`).join(", ")}`, value);
  }
  return value as T;
}

/** An instant's wall time in `timeZone`, as floating ms (whole seconds). */
function floatingOf(instant: number, timeZone: string): number {
  const w = instant + cachedOffsetMinutes(timeZone, instant) * 60_000;
  return Math.floor(w / 1000) * 1000;
}

/** UNTIL (RFC 5545) as the last instant it allows. */
function untilInstant(until: string, timeZone: string): number {
  const year = Number(until.slice(0, 4));
  const month = Number(until.slice(4, 6));
  const day = Number(until.slice(6, 8));
  if (until.length === 8) {
    // a date: every occurrence of that day, so up to the next day's midnight (exclusive)
    const next = new Date(Date.UTC(year, month - 1, day + 1));
    const midnight = {
      year: next.getUTCFullYear(),
      month: next.getUTCMonth() + 1,
      day: next.getUTCDate(),
      hour: 0,
      minute: 0,
      second: 0,
      millisecond: 0,
    };
    return zonedWallTimeToInstant(midnight, timeZone) - 1;
  }
  const hour = Number(until.slice(9, 11));
  const minute = Number(until.slice(11, 13));
  const second = Number(until.slice(13, 15));
  if (until.endsWith("Z")) return Date.UTC(year, month - 1, day, hour, minute, second);
  return zonedWallTimeToInstant(
    { year, month, day, hour, minute, second, millisecond: 0 },
    timeZone,
  );
}

interface Plan {
  readonly sequence: WallSequence;
  readonly fields: FieldSpec | null;
  readonly end?: number;
  readonly count?: number;
}

function plan(spec: RecurrenceSpec, start: number | undefined): Plan {
  const { kind, text } = ruleText(spec.rule);
  if (kind === "cron") return cached(plans, `cron:${text}`, () => compileCron(text));
  const anchor = start === undefined ? null : floatingOf(start, spec.timeZone);
  return cached(plans, JSON.stringify(["rrule", text, spec.timeZone, anchor]), () => {
    const parts = parseRrule(text);
    const compiled = compileRrule(parts, text, anchor);
    return {
      ...compiled,
      ...(parts.until === undefined ? {} : { end: untilInstant(parts.until, spec.timeZone) }),
      ...(parts.count === undefined ? {} : { count: parts.count }),
    };
  });
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

/**
 * Compiles a rule in a zone, checked: a bad rule, zone, bound or policy throws
 * InvalidJobError naming the field (`rule`, `cron`, `rrule`, `timeZone`, `start`, `end`,
 * `count`, `gap`, `overlap`), and so does a rule that never matches (`0 0 30 2 *`), found by
 * a bounded search. Compiled rules are cached by their whole spec.
 */
export function compileRecurrence(spec: RecurrenceSpec): Recurrence {
  if (!isObject(spec))
    throw new InvalidJobError("recurrence", "an object with rule and timeZone", spec);
  return cached(cache, cacheKey(spec), () => build(spec));
}

/**
 * The spec as a cache key, or null when it is not a well-typed spec (build then checks it
 * and throws). Texts are JSON-quoted, so no two specs share a key. Built by concatenation: a
 * claim of 500 occurrences asks for it 500 times.
 */
function cacheKey(spec: RecurrenceSpec): string | null {
  const rule = spec.rule as Partial<Record<"cron" | "rrule", unknown>> | undefined;
  if (!isObject(rule)) return null;
  const { cron, rrule } = rule;
  const text = typeof cron === "string" ? cron : rrule;
  if (typeof text !== "string" || (cron !== undefined && rrule !== undefined)) return null;
  const { timeZone, start, end, count, gap, overlap } = spec;
  if (typeof timeZone !== "string" || !optional(start, "number") || !optional(end, "number"))
    return null;
  if (!optional(count, "number") || !optional(gap, "string") || !optional(overlap, "string"))
    return null;
  const kind = cron === undefined ? "r" : "c";
  return `${kind}${JSON.stringify(text)} ${JSON.stringify(timeZone)} ${start} ${end} ${count} ${JSON.stringify(gap)} ${JSON.stringify(overlap)}`;
}

function optional(value: unknown, type: "number" | "string"): boolean {
  return value === undefined || typeof value === type;
}

function build(spec: RecurrenceSpec): Recurrence {
  assertTimeZone(spec.timeZone, "timeZone");
  const start = optionalInstant(spec.start, "start");
  const givenEnd = optionalInstant(spec.end, "end");
  if (
    spec.count !== undefined &&
    (!Number.isInteger(spec.count) || spec.count < 1 || spec.count > MAX_COUNT)
  ) {
    throw new InvalidJobError("count", `an integer from 1 to ${MAX_COUNT}`, spec.count);
  }
  if (spec.count !== undefined && start === undefined) {
    throw new InvalidJobError(
      "start",
      "a start to count the occurrences from (count is given)",
      undefined,
    );
  }
  if (start !== undefined && givenEnd !== undefined && givenEnd < start) {
    throw new InvalidJobError(
      "end",
      `an instant at or after start (${new Date(start).toISOString()})`,
      givenEnd,
    );
  }
  const gap: GapPolicy = policy(spec.gap, GAP_POLICIES, "gap") ?? "shift";
  const overlap: OverlapPolicy = policy(spec.overlap, OVERLAP_POLICIES, "overlap") ?? "first";
  const p = plan(spec, start);
  const parts = ruleParts(spec.rule);
  const rule = ruleFromParts(parts.kind, parts.text);
  const probeFrom = start === undefined ? Date.UTC(2000, 0, 1) : start - 1;
  if (nextOccurrence(p.sequence, spec.timeZone, gap, overlap, probeFrom) === null) {
    const { kind, text } = ruleText(spec.rule);
    throw neverMatches(kind, text);
  }
  return new CompiledRecurrence(
    {
      rule,
      timeZone: spec.timeZone,
      gap,
      overlap,
      ...(start === undefined ? {} : { start }),
      ...(spec.end === undefined ? {} : { end: spec.end }),
      ...(spec.count === undefined ? {} : { count: spec.count }),
    },
    p.sequence,
    minDefined(givenEnd, p.end),
    minDefined(spec.count, p.count),
  );
}

class CompiledRecurrence implements Recurrence {
  /** The last occurrence's instant when the series is counted, found on first need. */
  private lastByCount: number | null | undefined;
  /**
   * The last next() asked and its answer. Series of one rule fire together (every user's
   * "0 9 * * *" at 09:00), and a claim steps each from the same instant: one answer serves
   * the whole burst instead of a wall-time walk and zone mapping per series (a claim of 500
   * occurrences spent most of its JavaScript time in next(), bench/series.ts).
   */
  private memoAfter = Number.NaN;
  private memoNext: Occurrence | null = null;

  constructor(
    readonly spec: Recurrence["spec"],
    private readonly sequence: WallSequence,
    private readonly end: number | undefined,
    private readonly count: number | undefined,
  ) {
    Object.freeze(this.spec);
  }

  next(afterMs: number): Occurrence | null {
    if (afterMs === this.memoAfter) return this.memoNext;
    const next = this.compute(afterMs);
    this.memoAfter = afterMs;
    this.memoNext = next;
    return next;
  }

  private compute(afterMs: number): Occurrence | null {
    if (!Number.isFinite(afterMs))
      throw new InvalidJobError("after", "an instant in epoch milliseconds", afterMs);
    const { start, timeZone, gap, overlap } = this.spec;
    const after = start === undefined ? afterMs : Math.max(afterMs, start - 1);
    const last = this.lastCounted();
    if (last === null) return null;
    const end = minDefined(this.end, last);
    if (end !== undefined && after >= end) return null;
    const o = nextOccurrence(this.sequence, timeZone, gap, overlap, after);
    return o === null || (end !== undefined && o.at > end) ? null : o;
  }

  preview(fromMs: number, count: number): Occurrence[] {
    const n = Math.max(0, Math.min(Math.floor(count), MAX_PREVIEW));
    const out: Occurrence[] = [];
    let after = fromMs;
    while (out.length < n) {
      const o = this.next(after);
      if (o === null) break;
      out.push(o);
      after = o.at;
    }
    return out;
  }

  private lastCounted(): number | null | undefined {
    if (this.count === undefined) return undefined;
    if (this.lastByCount === undefined) {
      const { start, timeZone, gap, overlap } = this.spec;
      let after = start! - 1;
      let at: number | null = null;
      for (let i = 0; i < this.count; i++) {
        const o = nextOccurrence(this.sequence, timeZone, gap, overlap, after);
        if (o === null || (this.end !== undefined && o.at > this.end)) break;
        at = after = o.at;
      }
      this.lastByCount = at;
    }
    return this.lastByCount;
  }
}
