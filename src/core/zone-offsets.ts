import { tzOffsetMinutes } from "./wall-time.js";

/**
 * A zone's UTC offset at an instant, from a table of UTC days instead of an Intl call each
 * time. Intl.DateTimeFormat#formatToParts costs a few microseconds, and a series computing
 * its next occurrence maps wall times to instants with several offset look-ups; with the
 * table a look-up is a Map read.
 *
 * Each UTC day of a zone is read once: its offset at the day's start and end, and where they
 * differ the instant of the change, found to the second by bisection. It relies on no zone
 * changing its offset twice within one UTC day (tzdata has no such day; wallTimeInstants
 * relies on the same within two days).
 */

const DAY_MS = 86_400_000;

interface ZoneDay {
  /** Offset in minutes at the day's first millisecond. */
  readonly start: number;
  /** Offset in minutes from `changeAt` to the day's end (equal to start on most days). */
  readonly end: number;
  /** First instant (epoch ms) with the `end` offset. */
  readonly changeAt: number;
}

/** Days kept per zone before the table starts again: about 27 years of daily look-ups. */
const MAX_DAYS_PER_ZONE = 10_000;
/** Zones kept: validated IANA names number a few hundred. */
const MAX_ZONES = 1000;

const tables = new Map<string, Map<number, ZoneDay>>();

/** Offset of `timeZone` from UTC at `instant`, in minutes (east positive), as tzOffsetMinutes. */
export function cachedOffsetMinutes(timeZone: string, instant: number): number {
  if (!Number.isFinite(instant)) return tzOffsetMinutes(timeZone, instant);
  let table = tables.get(timeZone);
  if (table === undefined) {
    if (tables.size >= MAX_ZONES) tables.clear();
    table = new Map();
    tables.set(timeZone, table);
  }
  const dayIndex = Math.floor(instant / DAY_MS);
  let day = table.get(dayIndex);
  if (day === undefined) {
    if (table.size >= MAX_DAYS_PER_ZONE) table.clear();
    day = readDay(timeZone, dayIndex * DAY_MS);
    table.set(dayIndex, day);
  }
  return instant < day.changeAt ? day.start : day.end;
}

function readDay(timeZone: string, dayStart: number): ZoneDay {
  const start = tzOffsetMinutes(timeZone, dayStart);
  // offsets change on whole seconds (tzdata), so whole seconds are all that is probed
  let hi = dayStart + DAY_MS - 1000;
  const end = tzOffsetMinutes(timeZone, hi);
  if (start === end) return { start, end, changeAt: dayStart };
  // bisect: lo has the start offset, hi the end offset
  let lo = dayStart;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (tzOffsetMinutes(timeZone, mid) === start) lo = mid;
    else hi = mid;
  }
  return { start, end, changeAt: hi };
}
