import { InvalidJobError } from "../errors.js";
import { MAX_COUNT } from "./types.js";

/**
 * RRULE values (RFC 5545 §3.3.10) read into their parts and checked part by part, so a bad
 * rule is refused naming what is wrong before any library sees it. Enumeration is
 * elsewhere: rrule-rule.ts.
 */

export const FREQUENCIES = [
  "SECONDLY",
  "MINUTELY",
  "HOURLY",
  "DAILY",
  "WEEKLY",
  "MONTHLY",
  "YEARLY",
] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** RFC 5545 weekday codes, in JavaScript's order (0 is Sunday). */
export const WEEKDAY_CODES = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"] as const;

/** One BYDAY entry: a weekday (0 Sunday), with an ordinal (-1FR: the last Friday) or not. */
export interface ByDay {
  readonly weekday: number;
  readonly ordinal: number | null;
}

export interface RruleParts {
  readonly freq: Frequency;
  readonly interval: number;
  readonly count?: number;
  /** UNTIL as written: YYYYMMDD, YYYYMMDDTHHMMSS (wall time) or YYYYMMDDTHHMMSSZ (UTC). */
  readonly until?: string;
  readonly bySecond?: readonly number[];
  readonly byMinute?: readonly number[];
  readonly byHour?: readonly number[];
  readonly byDay?: readonly ByDay[];
  readonly byMonthDay?: readonly number[];
  readonly byYearDay?: readonly number[];
  readonly byWeekNo?: readonly number[];
  readonly byMonth?: readonly number[];
  readonly bySetPos?: readonly number[];
  readonly wkst?: string;
  /** The parts as written (upper-cased names), for the library. */
  readonly raw: ReadonlyMap<string, string>;
}

export const RRULE_TEXT = "an RRULE value such as FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=0";

/** Largest INTERVAL read: every 1,000 periods is already further than any reminder needs. */
const MAX_INTERVAL = 1000;
/** Most values one BY* list may hold (BYSECOND could list all 60, BYYEARDAY a few hundred). */
const MAX_LIST = 400;

const INT_LISTS: Readonly<Record<string, readonly [keyof RruleParts, number, number, boolean]>> = {
  // name: [key, min, max, negatives allowed]
  BYSECOND: ["bySecond", 0, 59, false],
  BYMINUTE: ["byMinute", 0, 59, false],
  BYHOUR: ["byHour", 0, 23, false],
  BYMONTHDAY: ["byMonthDay", 1, 31, true],
  BYYEARDAY: ["byYearDay", 1, 366, true],
  BYWEEKNO: ["byWeekNo", 1, 53, true],
  BYMONTH: ["byMonth", 1, 12, false],
  BYSETPOS: ["bySetPos", 1, 366, true],
};
const KNOWN = ["FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY", "WKST", ...Object.keys(INT_LISTS)];
const UNTIL_FORM = /^\d{8}(?:T\d{6}Z?)?$/;
const BYDAY_FORM = /^([+-]?\d{1,2})?(SU|MO|TU|WE|TH|FR|SA)$/;

function refuse(text: string, field: string, reason: string): never {
  throw new InvalidJobError(field, `${RRULE_TEXT} (${reason})`, text);
}

function intList(name: string, value: string, text: string, field: string): readonly number[] {
  const [, min, max, negatives] = INT_LISTS[name]!;
  const items = value.split(",");
  if (items.length > MAX_LIST) refuse(text, field, `${name} lists at most ${MAX_LIST} values`);
  return items.map((item) => {
    const n = /^[+-]?\d{1,3}$/.test(item) ? Number(item) : Number.NaN;
    const abs = Math.abs(n);
    if (
      !Number.isInteger(n) ||
      abs < min ||
      abs > max ||
      (n < 0 && !negatives) ||
      (n === 0 && min > 0)
    ) {
      const range = negatives ? `${min} to ${max} or -${max} to -${min}` : `${min} to ${max}`;
      refuse(text, field, `${name} values are integers from ${range}, got ${JSON.stringify(item)}`);
    }
    return n;
  });
}

function byDayList(value: string, text: string, field: string): readonly ByDay[] {
  return value.split(",").map((item) => {
    const m = BYDAY_FORM.exec(item);
    const ordinal = m?.[1] === undefined ? null : Number(m[1]);
    if (m === null || ordinal === 0 || (ordinal !== null && Math.abs(ordinal) > 53)) {
      refuse(
        text,
        field,
        `BYDAY entries are weekday codes (MO, TU, ...) optionally after an ordinal from -53 to 53 (1MO, -1FR), got ${JSON.stringify(item)}`,
      );
    }
    return { weekday: WEEKDAY_CODES.indexOf(m[2] as (typeof WEEKDAY_CODES)[number]), ordinal };
  });
}

/** Reads an RRULE value ("FREQ=DAILY;BYHOUR=9", an "RRULE:" prefix allowed). */
export function parseRrule(text: string, field = "rrule"): RruleParts {
  const body = text.trim().replace(/^RRULE:/i, "");
  if (/[\r\n]/.test(body)) {
    refuse(
      text,
      field,
      "one RRULE line only; give DTSTART as the series' start and its zone as timeZone",
    );
  }
  const raw = new Map<string, string>();
  for (const part of body.split(";")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = (eq < 0 ? part : part.slice(0, eq)).toUpperCase();
    const value = eq < 0 ? "" : part.slice(eq + 1).toUpperCase();
    if (!KNOWN.includes(name)) {
      refuse(text, field, `unknown part ${JSON.stringify(name)}; known parts: ${KNOWN.join(", ")}`);
    }
    if (value === "") refuse(text, field, `${name} has no value`);
    if (raw.has(name)) refuse(text, field, `${name} is given twice`);
    raw.set(name, value);
  }
  const freq = raw.get("FREQ");
  if (freq === undefined || !(FREQUENCIES as readonly string[]).includes(freq)) {
    refuse(text, field, `FREQ is one of ${FREQUENCIES.join(", ")}`);
  }
  const parts: Record<string, unknown> = { freq, interval: 1, raw };
  for (const [name, value] of raw) {
    const list = INT_LISTS[name];
    if (list !== undefined) parts[list[0]] = intList(name, value, text, field);
  }
  const interval = raw.get("INTERVAL");
  if (interval !== undefined) {
    const n = /^\d{1,4}$/.test(interval) ? Number(interval) : 0;
    if (n < 1 || n > MAX_INTERVAL)
      refuse(text, field, `INTERVAL is an integer from 1 to ${MAX_INTERVAL}`);
    parts.interval = n;
  }
  const count = raw.get("COUNT");
  if (count !== undefined) {
    const n = /^\d{1,6}$/.test(count) ? Number(count) : 0;
    if (n < 1 || n > MAX_COUNT) refuse(text, field, `COUNT is an integer from 1 to ${MAX_COUNT}`);
    parts.count = n;
  }
  const until = raw.get("UNTIL");
  if (until !== undefined) {
    if (!UNTIL_FORM.test(until))
      refuse(text, field, "UNTIL is YYYYMMDD, YYYYMMDDTHHMMSS or YYYYMMDDTHHMMSSZ");
    if (count !== undefined) refuse(text, field, "COUNT and UNTIL cannot both be given");
    parts.until = until;
  }
  const byDay = raw.get("BYDAY");
  if (byDay !== undefined) parts.byDay = byDayList(byDay, text, field);
  const wkst = raw.get("WKST");
  if (wkst !== undefined) {
    if (!(WEEKDAY_CODES as readonly string[]).includes(wkst))
      refuse(text, field, "WKST is a weekday code (MO, TU, ...)");
    parts.wkst = wkst;
  }
  return parts as unknown as RruleParts;
}
