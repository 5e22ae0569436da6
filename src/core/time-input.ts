import { Described, InvalidJobError, describeReceived } from "./errors.js";
import { timeTextParser, type TimeTextParser } from "./locales.js";
import { tzOffsetMinutes, zonedWallTimeToInstant } from "./wall-time.js";

/**
 * Turns what a person or a client writes for "when" into an epoch-ms instant:
 *  - a number: epoch milliseconds;
 *  - a Date;
 *  - an ISO 8601 time with an offset or Z ("2026-12-01T09:00:00+01:00");
 *  - an ISO 8601 time without one ("2026-12-03T10:00:00", "2026-12-03"): a wall time, read in
 *    `timeZone` (a time the clocks skip moves forward by the gap, one they show twice is its
 *    first occurrence: docs/clocks.md);
 *  - a delay ("in 10 minutes", "in 2h", "in 90 seconds");
 *  - natural language ("tomorrow 9am", "next friday at 17:30"), read in `timeZone` (an IANA
 *    name, default UTC) by chrono-node, in English or in `locale` ("demain à 9h" with fr).
 * One parser for the library, the HTTP API, the MCP tools and the CLI.
 */
export function parseDueTime(value: unknown, opts: DueTimeTextOptions): number {
  const field = opts.field ?? "dueAt";
  return requireInstant(readDueTime(value, opts, field), field, value);
}

/**
 * The one range rule for due times, on every path (schedule, scheduleMany, reschedule, retry,
 * list bounds; library, HTTP, MCP, CLI, dashboard): a finite epoch-ms integer from 1970 to
 * the end of year 9999. Checked before anything is written, so no stored job holds a time
 * that cannot be shown (`toISOString` throws past year 275760; PostgreSQL's bigint ends
 * before "in 99999999999 weeks").
 */
export function requireInstant(ms: number, field: string, received: unknown = ms): number {
  if (isEpochMs(ms)) return ms;
  const shown =
    typeof received === "number"
      ? received
      : new Described(
          typeof received === "string"
            ? `${describeReceived(received)} (${describeInstant(ms)})`
            : describeInstant(ms),
        );
  throw new InvalidJobError(field, DUE_RANGE_TEXT, shown);
}

/** A number parseDueTime accepts as it is: an epoch-ms integer from 0 to the end of year 9999. */
export function isEpochMs(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_INSTANT;
}

/** How parseDueTime reads a text. */
export interface DueTimeTextOptions {
  /** The instant "in 10 minutes" and "tomorrow" count from (epoch ms). */
  readonly now: number;
  /** IANA zone wall times and natural language are read in. Default UTC. */
  readonly timeZone?: string;
  /** Language of natural-language text (locales.ts lists them). Default English. */
  readonly locale?: string;
  /** Field names for errors. Defaults "dueAt", "timeZone", "locale". */
  readonly field?: string;
  readonly timeZoneField?: string;
  readonly localeField?: string;
}

/** The last instant a due time may be: 9999-12-31T23:59:59.999Z. */
export const MAX_INSTANT = 253_402_300_799_999;
/**
 * Longest time text read, in characters. Every reader below is linear, but chrono-node's own
 * expressions are not all so: capped here, its worst measured case is a few milliseconds
 * (docs/benchmarks.md, `npm run bench:time-text`). The longest sensible text ("next friday at
 * 17:30", "in 1 week 2 days 3 hours and 4 minutes") is under 60.
 */
export const MAX_TIME_TEXT = 200;

/** Longest IANA zone name read ("America/Argentina/ComodRivadavia" is 32). */
export const MAX_TIME_ZONE = 64;

const DUE_RANGE_TEXT =
  "an epoch-ms integer from 0 to 253402300799999 (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)";

/** What an out-of-range instant was, in words that cannot throw. */
function describeInstant(ms: number): string {
  if (!Number.isFinite(ms)) return "beyond any representable time";
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? `epoch ms ${ms}` : d.toISOString();
}

function readDueTime(value: unknown, opts: DueTimeTextOptions, field: string): number {
  if (typeof value === "number") {
    if (!Number.isInteger(value)) {
      throw new InvalidJobError(field, DUE_RANGE_TEXT, value);
    }
    return value;
  }
  if (value instanceof Date) {
    const t = value.getTime();
    if (Number.isNaN(t)) throw new InvalidJobError(field, "a valid Date", "Invalid Date");
    return t;
  }
  if (typeof value !== "string" || value.trim() === "") {
    throw new InvalidJobError(field, EXPECTED, value);
  }
  // Before any parser runs: what it costs must be bounded by this length, not the body's.
  if (value.length > MAX_TIME_TEXT) {
    throw new InvalidJobError(
      field,
      `a time text of at most ${MAX_TIME_TEXT} characters`,
      new Described(`${value.length} characters`),
    );
  }
  const text = value.trim();
  const timeZone = opts.timeZone ?? "UTC";
  assertTimeZone(timeZone, opts.timeZoneField ?? "timeZone");
  if (ISO_WITH_OFFSET.test(text)) {
    const t = Date.parse(text);
    if (Number.isNaN(t)) throw new InvalidJobError(field, EXPECTED, value);
    return t;
  }
  if (EXPANDED_YEAR.test(text)) throw new InvalidJobError(field, FOUR_DIGIT_YEAR, value);
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) return readLocalIso(text, value, timeZone, field);
  const delay = parseDelay(text);
  if (delay !== null) return opts.now + delay;
  // chrono reads "every monday at 9am" as the next Monday: one job where a series was meant.
  if (RECURRING_WORDS.test(text)) throw new InvalidJobError(field, ONE_TIME_NOT_A_RULE, value);
  const parser = timeTextParser(opts.locale, opts.localeField ?? "locale");
  return readNaturalTime(parser, text, value, opts.now, timeZone, field);
}

/** "2026-12-03T10:00:00" or "2026-12-03" (midnight): a wall time in `timeZone`. */
function readLocalIso(text: string, value: string, timeZone: string, field: string): number {
  const m = ISO_WITHOUT_OFFSET.exec(text);
  const wall = m && {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    millisecond: Number((m[7] ?? "0").padEnd(3, "0")),
  };
  if (
    !wall ||
    wall.month < 1 ||
    wall.month > 12 ||
    wall.day < 1 ||
    wall.day > daysInMonth(wall.year, wall.month) ||
    wall.hour > 23 ||
    wall.minute > 59 ||
    wall.second > 59
  ) {
    throw new InvalidJobError(
      field,
      "an ISO 8601 date and time (2026-12-03T10:00:00, read in timeZone; or with an offset or Z)",
      value,
    );
  }
  return zonedWallTimeToInstant(wall, timeZone);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** "tomorrow 9am", "next friday at 17:30": chrono-node, read in `timeZone`. */
function readNaturalTime(
  chrono: TimeTextParser,
  text: string,
  value: string,
  now: number,
  timeZone: string,
  field: string,
): number {
  const parsed = chrono.parse(
    text,
    { instant: new Date(now), timezone: tzOffsetMinutes(timeZone, now) },
    { forwardDate: true },
  );
  const first = parsed[0];
  if (!first) throw new InvalidJobError(field, EXPECTED, value);
  // Every word must be read: "tomorrow 9am banana" or "friday 9am Europe/Paris" would be
  // read as "tomorrow 9am" and "friday 9am" in timeZone, silently.
  const rest = (text.slice(0, first.index) + " " + text.slice(first.index + first.text.length))
    .replace(/[\s.,;:!?]+/gu, " ")
    .trim();
  if (rest !== "") {
    const zone = /^[a-z_]+(?:\/[a-z0-9_+-]+)+$|^UTC$/i.test(rest);
    throw new InvalidJobError(
      field,
      zone
        ? `${EXPECTED}, with the zone in timeZone (--tz), not in the text ("${rest}" was not read)`
        : `${EXPECTED}, every word of it read ("${rest}" was not)`,
      value,
    );
  }
  const comp = first.start;
  // chrono resolves wall-clock fields; rebuild the instant in the requested zone so DST
  // changes between now and the due date are honoured.
  if (comp.isCertain("timezoneOffset")) return first.date().getTime();
  return zonedWallTimeToInstant(
    {
      year: comp.get("year")!,
      month: comp.get("month")!,
      day: comp.get("day")!,
      hour: comp.get("hour") ?? 0,
      minute: comp.get("minute") ?? 0,
      second: comp.get("second") ?? 0,
      millisecond: comp.get("millisecond") ?? 0,
    },
    timeZone,
  );
}

/** A text that names a recurring rule, not one time ("every monday at 9am", "each day at 8"). */
const RECURRING_WORDS = /^(?:every|each)\b/i;
const ONE_TIME_NOT_A_RULE =
  "one time, not a recurring rule (a series: scheduleRecurring, POST /v1/schedules, duetime schedule add)";
const EXPECTED =
  'an ISO time with offset, epoch ms, a delay ("in 10 minutes") or a time such as "tomorrow 9am"';
/**
 * An ISO date with a signed six-digit or a five-digit year ("+275760-09-13T00:00:00Z"): a
 * form JavaScript reads, always outside the range due times may have, and said so.
 */
const EXPANDED_YEAR = /^(?:[+-]\d{6}|\d{5,})-\d{2}-\d{2}/;
const FOUR_DIGIT_YEAR =
  "a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (an ISO date with a four-digit year)";
/** Date, or date and time to the millisecond, with no offset: a wall time. */
const ISO_WITHOUT_OFFSET =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?$/i;
const ISO_WITH_OFFSET =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

const UNIT_MS: ReadonlyMap<string, number> = new Map([
  ["ms", 1],
  ["millisecond", 1],
  ["milliseconds", 1],
  ["s", 1000],
  ["sec", 1000],
  ["secs", 1000],
  ["second", 1000],
  ["seconds", 1000],
  ["m", 60_000],
  ["min", 60_000],
  ["mins", 60_000],
  ["minute", 60_000],
  ["minutes", 60_000],
  ["h", 3_600_000],
  ["hr", 3_600_000],
  ["hrs", 3_600_000],
  ["hour", 3_600_000],
  ["hours", 3_600_000],
  ["d", 86_400_000],
  ["day", 86_400_000],
  ["days", 86_400_000],
  ["w", 604_800_000],
  ["week", 604_800_000],
  ["weeks", 604_800_000],
]);

// The delay grammar, read left to right with sticky expressions so each character is looked
// at a bounded number of times: `(in <ws> | +) part (sep part)*`. No two adjacent quantifiers
// can trade characters (digits, '.', spaces and letters are disjoint), so nothing backtracks.
const DELAY_START = /in\s+|\+\s*/iy;
/** "10 minutes", "2h", "1.5 days". */
const DELAY_PART = /(\d+(?:\.\d+)?)\s*([a-z]+)/iy;
/** Between parts: spaces, or ',' / 'and' with spaces after (and maybe before). */
const DELAY_SEPARATOR = /\s+(?:(?:,|and)\s+)?|(?:,|and)\s+/iy;

/** "in 10 minutes", "in 2h 30m", "+90s" -> ms, or null when the text is not a delay. */
export function parseDelay(text: string): number | null {
  const s = text.trim();
  DELAY_START.lastIndex = 0;
  if (!DELAY_START.test(s)) return null;
  let at = DELAY_START.lastIndex;
  let total = 0;
  for (;;) {
    DELAY_PART.lastIndex = at;
    const part = DELAY_PART.exec(s);
    if (!part) return null;
    const unit = UNIT_MS.get(part[2]!.toLowerCase());
    if (unit === undefined) return null;
    total += Number(part[1]) * unit;
    at = DELAY_PART.lastIndex;
    if (at === s.length) return Math.round(total);
    DELAY_SEPARATOR.lastIndex = at;
    if (!DELAY_SEPARATOR.test(s)) return null;
    at = DELAY_SEPARATOR.lastIndex;
  }
}

export function assertTimeZone(timeZone: unknown, field: string): asserts timeZone is string {
  // IANA names are short; a long text is refused before Intl reads it.
  if (typeof timeZone !== "string" || timeZone.length > MAX_TIME_ZONE) {
    throw new InvalidJobError(field, "an IANA time zone name such as Europe/Paris", timeZone);
  }
  if (KNOWN_ZONES.has(timeZone)) return;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
  } catch {
    throw new InvalidJobError(field, "an IANA time zone name such as Europe/Paris", timeZone);
  }
  // bounded: IANA has a few hundred names (and their case variants)
  if (KNOWN_ZONES.size < 2000) KNOWN_ZONES.add(timeZone);
}

/** Zones Intl accepted already: a batch naming one zone per job builds one formatter. */
const KNOWN_ZONES = new Set<string>(["UTC"]);
