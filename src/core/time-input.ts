// The English parser only: the package root loads every locale (82 ms against 23 ms a start).
import * as chrono from "chrono-node/en";
import { InvalidJobError } from "./errors.js";

/**
 * Turns what a person or a client writes for "when" into an epoch-ms instant:
 *  - a number: epoch milliseconds;
 *  - a Date;
 *  - an ISO 8601 time with an offset or Z ("2026-12-01T09:00:00+01:00");
 *  - a delay ("in 10 minutes", "in 2h", "in 90 seconds");
 *  - natural language ("tomorrow 9am", "next friday at 17:30"), read in `timeZone` (an IANA
 *    name, default UTC) by chrono-node.
 * One parser for the library, the HTTP API, the MCP tools and the CLI.
 */
export function parseDueTime(
  value: unknown,
  opts: { now: number; timeZone?: string; field?: string; timeZoneField?: string },
): number {
  const field = opts.field ?? "dueAt";
  if (typeof value === "number") {
    if (!isEpochMs(value)) {
      throw new InvalidJobError(field, "an epoch-ms integer between 0 and year 9999", value);
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
  const text = value.trim();
  const timeZone = opts.timeZone ?? "UTC";
  assertTimeZone(timeZone, opts.timeZoneField ?? "timeZone");
  if (ISO_WITH_OFFSET.test(text)) {
    const t = Date.parse(text);
    if (Number.isNaN(t)) throw new InvalidJobError(field, EXPECTED, value);
    return t;
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    throw new InvalidJobError(
      field,
      "an ISO time with an offset or Z (e.g. 2026-12-01T09:00:00Z)",
      value,
    );
  }
  const delay = parseDelay(text);
  if (delay !== null) return opts.now + delay;
  const parsed = chrono.parse(
    text,
    { instant: new Date(opts.now), timezone: tzOffsetMinutes(timeZone, opts.now) },
    { forwardDate: true },
  );
  const first = parsed[0];
  if (!first || first.text.length < text.replace(/^(at|on)\s+/i, "").length * 0.6) {
    throw new InvalidJobError(field, EXPECTED, value);
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

/** A number parseDueTime accepts as it is: an epoch-ms integer from 0 to the end of year 9999. */
export function isEpochMs(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_INSTANT;
}

const EXPECTED =
  'an ISO time with offset, epoch ms, a delay ("in 10 minutes") or a time such as "tomorrow 9am"';
const MAX_INSTANT = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

/** "in 10 minutes", "in 2h 30m", "+90s" -> ms, or null when the text is not a delay. */
export function parseDelay(text: string): number | null {
  const m = /^(?:in\s+|\+)(.+)$/i.exec(text.trim());
  if (!m) return null;
  const parts = m[1]!.trim().split(/\s*(?:,|and)?\s+(?=\d)/i);
  let total = 0;
  for (const part of parts) {
    const pm = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i.exec(part.trim());
    if (!pm) return null;
    const unit = UNIT_MS[pm[2]!.toLowerCase()];
    if (unit === undefined) return null;
    total += Number(pm[1]) * unit;
  }
  return Math.round(total);
}

export function assertTimeZone(timeZone: string, field: string): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
  } catch {
    throw new InvalidJobError(field, "an IANA time zone name such as Europe/Paris", timeZone);
  }
}

/** Offset of `timeZone` from UTC at `instant`, in minutes (east positive). */
export function tzOffsetMinutes(timeZone: string, instant: number): number {
  const f = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
  const parts = Object.fromEntries(
    f.formatToParts(new Date(instant)).map((p) => [p.type, p.value]),
  );
  const asUtc = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/** The instant at which the clocks of `timeZone` show `w` (offset re-read at that instant). */
export function zonedWallTimeToInstant(w: WallTime, timeZone: string): number {
  const naive = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.millisecond);
  let guess = naive - tzOffsetMinutes(timeZone, naive) * 60_000;
  guess = naive - tzOffsetMinutes(timeZone, guess) * 60_000;
  return guess;
}
