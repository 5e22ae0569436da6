import { createRequire } from "node:module";
import type * as RruleModule from "rrule-temporal";
import { InvalidJobError } from "../errors.js";
import { RRULE_TEXT, type RruleParts } from "./rrule-parse.js";
import { FieldSequence, neverMatches, type FieldSpec, type WallSequence } from "./wall-sequence.js";

/**
 * RRULE enumeration in floating time. A rule with INTERVAL=1 whose parts are plain sets
 * (BYDAY without ordinals, BYMONTHDAY with positive days or -1, BYMONTH, BYHOUR, BYMINUTE,
 * BYSECOND) is a field rule, enumerated by FieldSequence with the parts RFC 5545 leaves to
 * DTSTART filled in from it (docs/recurring.md); every other rule (INTERVAL > 1, BYSETPOS,
 * BYWEEKNO, BYYEARDAY, 2MO, -3) goes to rrule-temporal, loaded on the first such rule only,
 * with DTSTART in its UTC zone, which is floating time. COUNT and UNTIL are not given to
 * either: the caller applies them to the instants (recurrence.ts).
 */

// rrule-temporal's CommonJS build, which bundles its own Temporal polyfill: loaded on first use
const requireModule = createRequire(import.meta.url);
let library: typeof RruleModule | undefined;
function loadLibrary(): typeof RruleModule {
  library ??= requireModule("rrule-temporal") as typeof RruleModule;
  return library;
}

const ALL_SECONDS = range(0, 59);
const ALL_HOURS = range(0, 23);
const ALL_DAYS = range(1, 31);
const ALL_MONTHS = range(1, 12);
const ALL_WEEKDAYS = range(0, 6);

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** DTSTART as a wall time: what the rule's missing parts are taken from. */
interface Anchor {
  readonly second: number;
  readonly minute: number;
  readonly hour: number;
  readonly day: number;
  readonly month: number;
  readonly weekday: number;
}

function anchorOf(floating: number): Anchor {
  const d = new Date(floating);
  return {
    second: d.getUTCSeconds(),
    minute: d.getUTCMinutes(),
    hour: d.getUTCHours(),
    day: d.getUTCDate(),
    month: d.getUTCMonth() + 1,
    weekday: d.getUTCDay(),
  };
}

export interface CompiledRrule {
  readonly sequence: WallSequence;
  readonly fields: FieldSpec | null;
}

/** Which date parts RFC 5545 takes from DTSTART for this rule, if any ("weekday", ...). */
function dateDefaults(p: RruleParts): "weekday" | "day" | "month and day" | null {
  const dayParts =
    p.byDay !== undefined ||
    p.byMonthDay !== undefined ||
    p.byYearDay !== undefined ||
    p.byWeekNo !== undefined;
  if (dayParts) return null;
  if (p.freq === "WEEKLY") return "weekday";
  if (p.freq === "MONTHLY") return "day";
  if (p.freq === "YEARLY") return p.byMonth === undefined ? "month and day" : "day";
  return null;
}

const RANK: Readonly<Record<RruleParts["freq"], number>> = {
  SECONDLY: 0,
  MINUTELY: 1,
  HOURLY: 2,
  DAILY: 3,
  WEEKLY: 4,
  MONTHLY: 5,
  YEARLY: 6,
};

/** Longest each month can be (February in a leap year). */
const MONTH_MAX_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether BYMONTH and BYMONTHDAY leave any date (BYMONTH=2;BYMONTHDAY=30 leaves none). Checked
 * before the library sees the rule: its bounded search takes up to half a second to give up
 * on such a rule with INTERVAL > 1, this check no time.
 */
function hasPossibleDate(p: RruleParts): boolean {
  if (p.byMonth === undefined || p.byMonthDay === undefined) return true;
  return p.byMonth.some((m) => p.byMonthDay!.some((d) => Math.abs(d) <= MONTH_MAX_DAYS[m - 1]!));
}

function isFieldRule(p: RruleParts): boolean {
  return (
    p.interval === 1 &&
    p.bySetPos === undefined &&
    p.byWeekNo === undefined &&
    p.byYearDay === undefined &&
    (p.byDay ?? []).every((d) => d.ordinal === null) &&
    (p.byMonthDay ?? []).every((d) => d > 0 || d === -1) &&
    !(p.freq === "WEEKLY" && p.byMonthDay !== undefined)
  );
}

function fieldSpec(p: RruleParts, a: Anchor): FieldSpec {
  const rank = RANK[p.freq];
  const defaults = dateDefaults(p);
  const monthDays = p.byMonthDay?.filter((d) => d > 0);
  return {
    seconds: p.bySecond ?? (rank === 0 ? ALL_SECONDS : [a.second]),
    minutes: p.byMinute ?? (rank <= 1 ? ALL_SECONDS : [a.minute]),
    hours: p.byHour ?? (rank <= 2 ? ALL_HOURS : [a.hour]),
    monthDays:
      monthDays ?? (defaults === "day" || defaults === "month and day" ? [a.day] : ALL_DAYS),
    lastDayOfMonth: p.byMonthDay?.includes(-1) ?? false,
    months: p.byMonth ?? (defaults === "month and day" ? [a.month] : ALL_MONTHS),
    weekdays:
      p.byDay?.map((d) => d.weekday) ?? (defaults === "weekday" ? [a.weekday] : ALL_WEEKDAYS),
    dayLogic: "and",
    monthDaysRestricted: true,
    weekdaysRestricted: true,
  };
}

/** Floating ms as an RFC 5545 local DATE-TIME: 20260302T090000. */
function icsDateTime(floating: number): string {
  return new Date(floating).toISOString().slice(0, 19).replace(/[-:]/g, "");
}

/**
 * The rule's wall-time sequence. `anchor` is DTSTART in floating ms, or null when the series
 * has no start: the time parts the rule leaves out are then 00:00:00, and a rule that needs
 * DTSTART for a date part or for INTERVAL's phase is refused naming `startField`.
 */
export function compileRrule(
  p: RruleParts,
  text: string,
  anchor: number | null,
  field = "rrule",
  startField = "start",
): CompiledRrule {
  if (anchor === null) {
    const needs = dateDefaults(p);
    if (needs !== null || p.interval > 1 || p.count !== undefined) {
      const why =
        needs !== null
          ? `its ${needs} come from the start (or give ${needs === "weekday" ? "BYDAY" : needs === "day" ? "BYMONTHDAY" : "BYMONTH and BYMONTHDAY"})`
          : p.interval > 1
            ? "INTERVAL counts from the start"
            : "COUNT counts from the start";
      throw new InvalidJobError(
        startField,
        `a start for the rule ${JSON.stringify(text)}: ${why}`,
        undefined,
      );
    }
  }
  if (!hasPossibleDate(p)) throw neverMatches(field, text);
  // no start: the day the parts are read from does not matter any more (checked above)
  const dtstart = anchor ?? Date.UTC(2000, 0, 3);
  if (isFieldRule(p)) {
    const fields = fieldSpec(p, anchorOf(dtstart));
    return { sequence: new FieldSequence(fields), fields };
  }
  return { sequence: librarySequence(p, text, dtstart, field), fields: null };
}

/** Periods of FREQ in 400 years, the span after which the calendar repeats. */
const PERIODS_IN_400_YEARS: Readonly<Record<RruleParts["freq"], number>> = {
  SECONDLY: 12_623_040_000,
  MINUTELY: 210_384_000,
  HOURLY: 3_506_328,
  DAILY: 146_097,
  WEEKLY: 20_871,
  MONTHLY: 4800,
  YEARLY: 400,
};

/**
 * The library's cap on periods searched (its default is 10,000): 400 years of the rule's
 * periods where that is fewer, so a rule that never matches is refused in milliseconds
 * (FREQ=YEARLY;INTERVAL=2;BYMONTH=4;BYMONTHDAY=31 took 1.6 s at the default).
 */
function searchPeriods(p: RruleParts): number {
  return Math.max(100, Math.min(10_000, Math.ceil(PERIODS_IN_400_YEARS[p.freq] / p.interval) + 10));
}

function librarySequence(
  p: RruleParts,
  text: string,
  dtstart: number,
  field: string,
): WallSequence {
  const a = anchorOf(dtstart);
  const parts: string[] = [];
  for (const [name, value] of p.raw) {
    if (name !== "COUNT" && name !== "UNTIL") parts.push(`${name}=${value}`);
  }
  // the anchor's time parts, written out, so a rule without a start reads as 00:00:00
  const rank = RANK[p.freq];
  if (p.bySecond === undefined && rank > 0) parts.push(`BYSECOND=${a.second}`);
  if (p.byMinute === undefined && rank > 1) parts.push(`BYMINUTE=${a.minute}`);
  if (p.byHour === undefined && rank > 2) parts.push(`BYHOUR=${a.hour}`);
  const { RRuleTemporal } = loadLibrary();
  let rule: RruleModule.RRuleTemporal;
  try {
    rule = new RRuleTemporal({
      rruleString: `DTSTART;TZID=UTC:${icsDateTime(dtstart)}\nRRULE:${parts.join(";")}`,
      maxIterations: searchPeriods(p),
    });
  } catch (err) {
    throw new InvalidJobError(
      field,
      `${RRULE_TEXT} (${err instanceof Error ? err.message : ""})`,
      text,
    );
  }
  return {
    after(floating: number): number | null {
      try {
        const next = rule.next(new Date(floating));
        return next === null ? null : next.epochMilliseconds;
      } catch (err) {
        // its search caps (maxIterations): no occurrence within the library's bound
        if (err instanceof Error && /maximum|exceeded/i.test(err.message)) return null;
        throw err;
      }
    },
  };
}
