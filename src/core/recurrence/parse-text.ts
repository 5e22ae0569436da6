import { InvalidJobError } from "../errors.js";
import { assertTimeZone } from "../time-input.js";
import { WEEKDAY_CODES } from "./rrule-parse.js";
import { MONTH_NAMES, ORDINAL_WORDS, WEEKDAY_NAMES } from "./text-words.js";
import type { RecurrenceRule } from "./types.js";

/**
 * English recurrence text to an RRULE ("every weekday at 9am" -> FREQ=WEEKLY;BYDAY=MO,TU,WE,
 * TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0). A small hand-written grammar: a date part read by
 * one of a few anchored patterns, then an optional time part ("at 9am", "at 9:00 and
 * 17:00", "at noon"). No library reads English into RRULE well (rrule's fromText guesses),
 * and a reminder read as another rule fires at the wrong times, so text outside the grammar
 * is refused with examples that work, never guessed. The wall times are the series' zone's.
 */

/** Longest text read: the grammar's longest phrases are under 80 characters. */
export const MAX_RECURRENCE_TEXT = 200;

export const RECURRENCE_TEXT_EXAMPLES =
  '"every weekday at 9am", "every 2 weeks on monday at 17:30", "every day at 8", "the last day of each month at 18:00", "the first monday of each month at 9:30", "every hour", "every 15 minutes"';

const DAY =
  "(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)s?";
const DAYS = `(${DAY}(?: ?(?:,|and|&) ?${DAY})*)`;
const EVERY = "(?:every|each)";
const EACH_MONTH = "of (?:each|every|the) month";
const ORDINAL_DAY = "(\\d{1,2})(?:st|nd|rd|th)?";
const MONTH = `(${MONTH_NAMES.map((m) => m.toLowerCase()).join("|")}|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)`;

interface DatePart {
  readonly parts: string[];
  /** Whether the rule fires at times of day (a time part is needed), or every hour/minutes. */
  readonly daily: boolean;
}

function weekdayCodes(list: string): string {
  const codes = list
    .split(/ ?(?:,|and|&) ?/)
    .map((name) =>
      WEEKDAY_NAMES.findIndex((w) =>
        w.toLowerCase().startsWith(name.replace(/s$/, "").slice(0, 3)),
      ),
    )
    .map((i) => WEEKDAY_CODES[i]!);
  return [...new Set(codes)].join(",");
}

function monthNumber(name: string): number {
  return MONTH_NAMES.findIndex((m) => m.toLowerCase().startsWith(name.slice(0, 3))) + 1;
}

function interval(n: string | undefined): string[] {
  return n === undefined || n === "1" ? [] : [`INTERVAL=${Number(n)}`];
}

type Reader = (m: RegExpExecArray) => DatePart | null;

/** The date part's patterns, each anchored at both ends. */
const DATE_PATTERNS: readonly [RegExp, Reader][] = [
  [new RegExp(`^(?:${EVERY} day|daily)$`), () => ({ parts: ["FREQ=DAILY"], daily: true })],
  [
    new RegExp(`^${EVERY} (\\d{1,3}) days$`),
    (m) => ({ parts: ["FREQ=DAILY", ...interval(m[1])], daily: true }),
  ],
  [
    new RegExp(`^(?:${EVERY} weekday|(?:on )?weekdays|${EVERY} working day)$`),
    () => ({ parts: ["FREQ=WEEKLY", "BYDAY=MO,TU,WE,TH,FR"], daily: true }),
  ],
  [
    new RegExp(`^(?:${EVERY} weekend(?: day)?|(?:on )?weekends)$`),
    () => ({ parts: ["FREQ=WEEKLY", "BYDAY=SA,SU"], daily: true }),
  ],
  [
    new RegExp(`^(?:${EVERY} |on )${DAYS}$`),
    (m) => ({ parts: ["FREQ=WEEKLY", `BYDAY=${weekdayCodes(m[1]!)}`], daily: true }),
  ],
  [
    new RegExp(`^(?:${EVERY} (?:(\\d{1,3}) weeks|week)|weekly) on ${DAYS}$`),
    (m) => ({
      parts: ["FREQ=WEEKLY", ...interval(m[1]), `BYDAY=${weekdayCodes(m[2]!)}`],
      daily: true,
    }),
  ],
  [
    new RegExp(`^(?:on )?(?:the )?last day ${EACH_MONTH}$`),
    () => ({ parts: ["FREQ=MONTHLY", "BYMONTHDAY=-1"], daily: true }),
  ],
  [new RegExp(`^(?:on )?the ${ORDINAL_DAY}(?: day)? ${EACH_MONTH}$`), (m) => monthDay(m[1]!)],
  [new RegExp(`^(?:${EVERY} month|monthly) on the ${ORDINAL_DAY}$`), (m) => monthDay(m[1]!)],
  [
    new RegExp(
      `^(?:on )?the (first|second|third|fourth|fifth|last|[1-5](?:st|nd|rd|th)) ${DAY} ${EACH_MONTH}$`,
    ),
    (m) => ({
      parts: [
        "FREQ=MONTHLY",
        `BYDAY=${ORDINAL_WORDS[m[1]!] ?? Number(m[1]!.slice(0, 1))}${weekdayCodes(m[2]!)}`,
      ],
      daily: true,
    }),
  ],
  [
    new RegExp(`^(?:${EVERY} year on |${EVERY} |yearly on |annually on )${MONTH} ${ORDINAL_DAY}$`),
    (m) => yearDay(monthNumber(m[1]!), m[2]!),
  ],
  [
    new RegExp(`^(?:${EVERY} hour|hourly)$`),
    () => ({ parts: ["FREQ=HOURLY", "BYMINUTE=0", "BYSECOND=0"], daily: false }),
  ],
  [new RegExp(`^${EVERY} (\\d{1,2}) hours$`), (m) => everyN(Number(m[1]), 24, "HOURLY", "BYHOUR")],
  [
    new RegExp(`^${EVERY} minute$`),
    () => ({ parts: ["FREQ=MINUTELY", "BYSECOND=0"], daily: false }),
  ],
  [
    new RegExp(`^${EVERY} (\\d{1,2}) minutes$`),
    (m) => everyN(Number(m[1]), 60, "MINUTELY", "BYMINUTE"),
  ],
];

function monthDay(day: string): DatePart | null {
  const d = Number(day);
  return d >= 1 && d <= 31 ? { parts: ["FREQ=MONTHLY", `BYMONTHDAY=${d}`], daily: true } : null;
}

function yearDay(month: number, day: string): DatePart | null {
  const d = Number(day);
  const max = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return d >= 1 && d <= max
    ? { parts: ["FREQ=YEARLY", `BYMONTH=${month}`, `BYMONTHDAY=${d}`], daily: true }
    : null;
}

/**
 * "every 15 minutes", "every 6 hours": aligned on the clock (:00, :15, ...) when the step
 * divides the hour or the day, so the rule needs no start; otherwise an INTERVAL counted
 * from the series' start.
 */
function everyN(
  n: number,
  cycle: 24 | 60,
  freq: "HOURLY" | "MINUTELY",
  by: "BYHOUR" | "BYMINUTE",
): DatePart | null {
  if (n < 1 || n >= cycle * 100) return null;
  const finer = freq === "HOURLY" ? ["BYMINUTE=0", "BYSECOND=0"] : ["BYSECOND=0"];
  if (cycle % n === 0) {
    const values = Array.from({ length: cycle / n }, (_, i) => i * n);
    const coarse = freq === "HOURLY" ? "FREQ=DAILY" : "FREQ=HOURLY";
    return { parts: [coarse, `${by}=${values.join(",")}`, ...finer], daily: false };
  }
  return { parts: [`FREQ=${freq}`, `INTERVAL=${n}`, ...finer], daily: false };
}

/** One time of day: 9, 9am, 9 am, 9:30, 9.30pm, 17:30, noon, midnight. */
function timeOf(text: string): { hour: number; minute: number } | null {
  if (text === "noon" || text === "midday") return { hour: 12, minute: 0 };
  if (text === "midnight") return { hour: 0, minute: 0 };
  const m = /^(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?$/.exec(text);
  if (m === null) return null;
  let hour = Number(m[1]);
  const minute = m[2] === undefined ? 0 : Number(m[2]);
  if (minute > 59) return null;
  if (m[3] !== undefined) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (m[3].startsWith("p") ? 12 : 0);
  } else if (hour > 23) return null;
  return { hour, minute };
}

function refuse(text: unknown, field: string, why = ""): never {
  throw new InvalidJobError(
    field,
    `an English recurrence such as ${RECURRENCE_TEXT_EXAMPLES}${why === "" ? "" : ` (${why})`}`,
    text,
  );
}

// the text has its spaces collapsed to one (parseRecurrenceText), so the patterns use single
// spaces, which keeps every match linear

/** Splits "every weekday at 9am and 5pm" into the date part and its times (null: none given). */
function splitTimes(text: string, field: string): { date: string; times: string[] | null } {
  const at = / at /.exec(text);
  if (at === null) return { date: text, times: null };
  const date = text.slice(0, at.index);
  const times = text.slice(at.index + at[0].length).split(/ ?(?:,|\band\b|&) ?/);
  if (times.some((t) => t === "")) refuse(text, field, "a time is missing after 'at'");
  return { date, times };
}

/**
 * Reads English recurrence text into an RRULE for `timeZone`'s wall times. Text outside the
 * grammar is refused naming `field` (default "recurrence"), with examples that work.
 */
export function parseRecurrenceText(
  text: unknown,
  options: { readonly timeZone: string; readonly field?: string },
): RecurrenceRule {
  const field = options.field ?? "recurrence";
  assertTimeZone(options.timeZone, "timeZone");
  if (typeof text !== "string" || text.trim() === "" || text.length > MAX_RECURRENCE_TEXT) {
    refuse(text, field);
  }
  const clean = text.trim().toLowerCase().replace(/\s+/g, " ").replace(/[.!]$/, "");
  const { date, times } = splitTimes(clean, field);
  let found: DatePart | null = null;
  for (const [pattern, read] of DATE_PATTERNS) {
    const m = pattern.exec(date);
    if (m !== null) {
      found = read(m);
      if (found === null) refuse(text, field, "that day does not exist");
      break;
    }
  }
  if (found === null) refuse(text, field);
  if (!found.daily) {
    if (times !== null)
      refuse(text, field, "'every hour' and 'every N minutes' take no time of day");
    return { rrule: found.parts.join(";") };
  }
  if (times === null) refuse(text, field, "say the time, e.g. 'at 9am'");
  const read = times.map(timeOf);
  if (read.some((t) => t === null)) refuse(text, field, "times read like 9am, 9:30, 17:30, noon");
  const hours = [...new Set(read.map((t) => t!.hour))].sort((a, b) => a - b);
  const minutes = [...new Set(read.map((t) => t!.minute))];
  if (minutes.length > 1) {
    // BYHOUR x BYMINUTE would fire 09:00, 09:30, 17:00 and 17:30 for "at 9:00 and 17:30"
    refuse(
      text,
      field,
      "several times must share their minutes (at 9:00 and 17:00); make one series per time",
    );
  }
  return {
    rrule: [
      ...found.parts,
      `BYHOUR=${hours.join(",")}`,
      `BYMINUTE=${minutes[0]}`,
      "BYSECOND=0",
    ].join(";"),
  };
}
