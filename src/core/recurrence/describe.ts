import { assertTimeZone } from "../time-input.js";
import { cachedOffsetMinutes } from "../zone-offsets.js";
import { ruleText } from "./compile.js";
import { compileCron } from "./cron-rule.js";
import { parseRrule, type RruleParts } from "./rrule-parse.js";
import { compileRrule } from "./rrule-rule.js";
import { clockText, listText, MONTH_NAMES, ordinal, WEEKDAY_NAMES } from "./text-words.js";
import type { RecurrenceRule } from "./types.js";
import type { FieldSpec } from "./wall-sequence.js";

/**
 * A rule in English for people (the dashboard's schedules page): "every weekday at 09:00
 * (Europe/Paris)", "every 2 weeks on Monday at 17:30 (Europe/Paris)". Field rules are
 * described from their field sets, so a cron expression and the RRULE meaning the same
 * read the same; what the words here do not cover (W, BYSETPOS, BYWEEKNO...) is shown as
 * the rule itself, never approximated.
 */

/** Time-of-day combinations listed one by one ("at 09:00 and 17:00") before a summary. */
const MAX_LISTED_TIMES = 6;

function isStep(values: readonly number[], size: number): number | null {
  if (values.length < 2 || values[0] !== 0) return null;
  const step = values[1]!;
  if (size % step !== 0 || values.length !== size / step) return null;
  return values.every((v, i) => v === i * step) ? step : null;
}

/** "every 15 minutes", "every hour", or "at 09:00 and 17:00"; subDaily tells which. */
function timePhrase(f: FieldSpec): { text: string; subDaily: boolean } {
  const allHours = f.hours.length === 24;
  const secondsZero = f.seconds.length === 1 && f.seconds[0] === 0;
  if (secondsZero && allHours) {
    if (f.minutes.length === 60) return { text: "every minute", subDaily: true };
    const step = isStep(f.minutes, 60);
    if (step !== null) return { text: `every ${step} minutes`, subDaily: true };
    if (f.minutes.length === 1) {
      const m = f.minutes[0]!;
      return { text: m === 0 ? "every hour" : `every hour at minute ${m}`, subDaily: true };
    }
  }
  if (secondsZero && f.minutes.length === 1 && f.minutes[0] === 0) {
    const step = isStep(f.hours, 24);
    if (step !== null) return { text: `every ${step} hours`, subDaily: true };
  }
  if (f.seconds.length === 60 && f.minutes.length === 60 && allHours) {
    return { text: "every second", subDaily: true };
  }
  const count = f.hours.length * f.minutes.length * f.seconds.length;
  if (count <= MAX_LISTED_TIMES) {
    const times: string[] = [];
    for (const h of f.hours)
      for (const m of f.minutes) for (const s of f.seconds) times.push(clockText(h, m, s));
    return { text: `at ${listText(times)}`, subDaily: false };
  }
  const secs = secondsZero ? "" : `, second ${f.seconds.join(",")}`;
  return {
    text: `at minute ${f.minutes.join(",")} of hour ${f.hours.join(",")}${secs}`,
    subDaily: true,
  };
}

function weekdayPhrase(days: readonly number[]): string {
  const key = days.join(",");
  if (key === "1,2,3,4,5") return "weekday";
  if (key === "0,6") return "weekend day";
  return listText(days.map((d) => WEEKDAY_NAMES[d]!));
}

function monthDayPhrase(f: FieldSpec): string {
  const days = f.monthDays.map((d) => `the ${ordinal(d)}`);
  if (f.lastDayOfMonth) days.push("the last day");
  return listText(days);
}

/** "every weekday", "the last day of each month", "the 1st of each month and every Monday". */
function dayPhrase(f: FieldSpec): string {
  const dom = f.monthDays.length < 31 || (f.lastDayOfMonth && f.monthDays.length === 0);
  const domRestricted = dom && f.monthDaysRestricted;
  const dowRestricted = f.weekdays.length < 7 && f.weekdaysRestricted;
  const months =
    f.months.length < 12 ? ` in ${listText(f.months.map((m) => MONTH_NAMES[m - 1]!))}` : "";
  const ofMonth = months === "" ? " of each month" : "";
  if (f.dayLogic === "or" && domRestricted && dowRestricted) {
    return `${monthDayPhrase(f)}${ofMonth} and every ${weekdayPhrase(f.weekdays)}${months}`;
  }
  if (domRestricted) {
    const when = dowRestricted ? ` when it is a ${weekdayPhrase(f.weekdays)}` : "";
    return `${monthDayPhrase(f)}${ofMonth}${months}${when}`;
  }
  return `every ${dowRestricted ? weekdayPhrase(f.weekdays) : "day"}${months}`;
}

function describeFields(f: FieldSpec): string {
  const time = timePhrase(f);
  const day = dayPhrase(f);
  if (!time.subDaily) return `${day} ${time.text}`;
  return day === "every day" ? time.text : `${time.text}, ${day.replace(/^every /, "on every ")}`;
}

const UNIT: Readonly<Record<RruleParts["freq"], string>> = {
  SECONDLY: "second",
  MINUTELY: "minute",
  HOURLY: "hour",
  DAILY: "day",
  WEEKLY: "week",
  MONTHLY: "month",
  YEARLY: "year",
};

/** Rules with INTERVAL > 1 or ordinal weekdays, in words where they are common shapes. */
function describeLibraryRule(p: RruleParts, anchor: number): string | null {
  if (p.bySetPos !== undefined || p.byWeekNo !== undefined || p.byYearDay !== undefined)
    return null;
  if (p.byMonth !== undefined && p.freq !== "YEARLY") return null;
  // the time of day as a field rule of the same parts would have it
  const plain = {
    ...p,
    interval: 1,
    byDay: p.byDay?.map((d) => ({ weekday: d.weekday, ordinal: null })),
  };
  const fields = compileRrule(plain as RruleParts, "", anchor).fields;
  if (fields === null) return null;
  const time = timePhrase(fields);
  const every = p.interval > 1 ? `every ${p.interval} ${UNIT[p.freq]}s` : `every ${UNIT[p.freq]}`;
  const ordinals = p.byDay?.filter((d) => d.ordinal !== null) ?? [];
  if (ordinals.length > 0) {
    if (p.freq !== "MONTHLY" || ordinals.length !== p.byDay!.length || p.byMonthDay !== undefined)
      return null;
    const which = ordinals.map(
      (d) => `${d.ordinal === -1 ? "last" : ordinal(d.ordinal!)} ${WEEKDAY_NAMES[d.weekday]}`,
    );
    const of = p.interval > 1 ? `of every ${p.interval} months` : "of each month";
    return `the ${listText(which)} ${of} ${time.text}`;
  }
  if (p.freq === "WEEKLY") return `${every} on ${weekdayPhrase(fields.weekdays)} ${time.text}`;
  if (p.freq === "DAILY" && fields.weekdays.length === 7) return `${every} ${time.text}`;
  if (p.freq === "MONTHLY" && fields.weekdays.length === 7)
    return `${monthDayPhrase(fields)} of every ${p.interval} months ${time.text}`;
  return null;
}

/**
 * `rule` in English, with its zone: "every weekday at 09:00 (Europe/Paris)". `start` (epoch
 * ms) is the series' start, whose wall time gives an RRULE's missing parts as in
 * compileRecurrence. Throws InvalidJobError for a rule compileRecurrence would refuse.
 */
export function describeRecurrence(rule: RecurrenceRule, timeZone: string, start?: number): string {
  assertTimeZone(timeZone, "timeZone");
  const { kind, text } = ruleText(rule);
  const zone = ` (${timeZone})`;
  if (kind === "cron") {
    const { fields } = compileCron(text);
    return (fields === null ? `cron "${text}"` : describeFields(fields)) + zone;
  }
  const parts = parseRrule(text);
  const anchor =
    start === undefined
      ? null
      : Math.floor((start + cachedOffsetMinutes(timeZone, start) * 60_000) / 1000) * 1000;
  const { fields } = compileRrule(parts, text, anchor);
  const words =
    fields !== null
      ? describeFields(fields)
      : describeLibraryRule(parts, anchor ?? Date.UTC(2000, 0, 3));
  const bounds =
    parts.count !== undefined
      ? `, ${parts.count} times`
      : parts.until !== undefined
        ? `, until ${parts.until}`
        : "";
  return (words === null ? `RRULE ${text.replace(/^RRULE:/i, "")}` : `${words}${bounds}`) + zone;
}
