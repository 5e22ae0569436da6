import { InvalidJobError } from "../errors.js";

/**
 * The wall times a rule names, enumerated in "floating" time: a wall time written as epoch
 * ms as if it were UTC (09:00 on 2026-03-02 is Date.UTC(2026, 2, 2, 9)). Rules are
 * enumerated so, with no zone, and mapped to instants afterwards (zone-mapping.ts), so the
 * DST rules live in one place whatever library read the rule.
 */
export interface WallSequence {
  /** The first wall time of the rule strictly after `floating`, or null if there is none. */
  after(floating: number): number | null;
}

/**
 * A rule that is a set of allowed values per calendar field: what most cron expressions and
 * the common RRULEs (INTERVAL=1, plain BYDAY, BYMONTHDAY, BYMONTH, BYHOUR...) come to.
 * Months 1-12, days 1-31, weekdays 0-6 with 0 Sunday.
 */
export interface FieldSpec {
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly monthDays: readonly number[];
  /** The last day of each month matches too (cron `L`, BYMONTHDAY=-1). */
  readonly lastDayOfMonth: boolean;
  readonly months: readonly number[];
  readonly weekdays: readonly number[];
  /**
   * How a day restricted by both day of month and weekday matches: "or" is cron's reading
   * (`0 9 1 * 1`: the 1st, and every Monday), "and" RFC 5545's (Friday the 13th).
   */
  readonly dayLogic: "and" | "or";
  /** Whether day of month, and weekday, are restricted at all (cron's OR needs both). */
  readonly monthDaysRestricted: boolean;
  readonly weekdaysRestricted: boolean;
}

const DAY_MS = 86_400_000;
/**
 * Days searched before a rule is taken to match no more: the Gregorian calendar repeats
 * every 400 years (146,097 days), so a field rule with no day in that span has none ever.
 */
export const SEARCH_DAYS = 146_100;
/** The refusal of a rule the bounded search (or a check of its dates) finds no date for. */
export function neverMatches(field: string, text: string): InvalidJobError {
  return new InvalidJobError(
    field,
    "a rule that matches at least one date (this one matches none in 400 years)",
    text,
  );
}

/** Wall times past this year are not enumerated. */
const LAST_YEAR = 9999;

/** For each value 0..size-1, the smallest allowed value >= it, or -1. */
function nextTable(allowed: readonly number[], size: number): Int8Array {
  const table = new Int8Array(size + 1).fill(-1);
  const set = new Set(allowed);
  let next = -1;
  for (let v = size - 1; v >= 0; v--) {
    if (set.has(v)) next = v;
    table[v] = next;
  }
  return table;
}

function flags(allowed: readonly number[], size: number): Uint8Array {
  const f = new Uint8Array(size);
  for (const v of allowed) if (v >= 0 && v < size) f[v] = 1;
  return f;
}

function daysInMonth(year: number, month0: number): number {
  if (month0 === 1) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month0 === 3 || month0 === 5 || month0 === 8 || month0 === 10 ? 30 : 31;
}

/**
 * A field rule's wall times, found field by field (month, day, hour, minute, second) with a
 * table of the next allowed value per field: a few steps per call for a daily or weekly
 * rule, no allocation, no library. The day search is bounded by SEARCH_DAYS.
 */
export class FieldSequence implements WallSequence {
  private readonly nextSecond: Int8Array;
  private readonly nextMinute: Int8Array;
  private readonly nextHour: Int8Array;
  private readonly monthDay: Uint8Array;
  private readonly month: Uint8Array;
  private readonly weekday: Uint8Array;
  private readonly either: boolean;
  private readonly lastDay: boolean;

  constructor(readonly spec: FieldSpec) {
    this.nextSecond = nextTable(spec.seconds, 60);
    this.nextMinute = nextTable(spec.minutes, 60);
    this.nextHour = nextTable(spec.hours, 24);
    this.monthDay = flags(spec.monthDays, 32);
    this.month = flags(spec.months, 13);
    this.weekday = flags(spec.weekdays, 7);
    this.either = spec.dayLogic === "or" && spec.monthDaysRestricted && spec.weekdaysRestricted;
    this.lastDay = spec.lastDayOfMonth;
  }

  /** Whether the rule has any wall time at all on this day. */
  private dayMatches(year: number, month0: number, day: number, dim: number): boolean {
    const dom = this.monthDay[day] === 1 || (this.lastDay && day === dim);
    const weekday = (Math.floor(Date.UTC(year, month0, day) / DAY_MS) + 4) % 7;
    const dow = this.weekday[(weekday + 7) % 7] === 1;
    return this.either ? dom || dow : dom && dow;
  }

  after(floating: number): number | null {
    if (!Number.isFinite(floating)) return null;
    const from = new Date(Math.floor(floating / 1000) * 1000 + 1000);
    let year = from.getUTCFullYear();
    let month0 = from.getUTCMonth();
    let day = from.getUTCDate();
    let hour = from.getUTCHours();
    let minute = from.getUTCMinutes();
    let second = from.getUTCSeconds();
    for (let days = 0; days <= SEARCH_DAYS && year <= LAST_YEAR;) {
      const dim = daysInMonth(year, month0);
      if (this.month[month0 + 1] !== 1 || day > dim) {
        days += dim - day + 1;
        month0 += 1;
        if (month0 === 12) {
          month0 = 0;
          year += 1;
        }
        day = 1;
        hour = minute = second = 0;
        continue;
      }
      const h = hour < 24 ? this.nextHour[hour]! : -1;
      if (h < 0 || !this.dayMatches(year, month0, day, dim)) {
        days += 1;
        day += 1;
        hour = minute = second = 0;
        continue;
      }
      if (h !== hour) {
        hour = h;
        minute = second = 0;
      }
      const m = minute < 60 ? this.nextMinute[minute]! : -1;
      if (m < 0) {
        hour += 1;
        minute = second = 0;
        continue;
      }
      if (m !== minute) {
        minute = m;
        second = 0;
      }
      const s = second < 60 ? this.nextSecond[second]! : -1;
      if (s < 0) {
        minute += 1;
        second = 0;
        continue;
      }
      return Date.UTC(year, month0, day, hour, minute, s);
    }
    return null;
  }
}
