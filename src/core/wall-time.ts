import { isShowable, isoInstant } from "./instant-text.js";

/** A wall-clock reading: what the clocks of some zone show (month 1-12). */
export interface WallTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
}

/**
 * The instants at which the clocks of a zone show one wall time:
 *  - `exact`: one instant, the ordinary case;
 *  - `overlap`: two, `instants[0]` before `instants[1]`, when the clocks go back (02:30 on a
 *    night that repeats 02:00-03:00);
 *  - `gap`: none, when the clocks skip it (02:30 on a night that jumps from 02:00 to 03:00).
 *    `shifted` is the wall time moved forward by the gap's length (02:30 -> 03:30), as
 *    RFC 5545 reads a nonexistent DTSTART and as Temporal's `disambiguation: "compatible"`
 *    does.
 */
export type WallTimeInstants =
  | { readonly kind: "exact"; readonly instants: readonly [number] }
  | { readonly kind: "overlap"; readonly instants: readonly [number, number] }
  | { readonly kind: "gap"; readonly instants: readonly []; readonly shifted: number };

const DAY_MS = 86_400_000;

/** Offset of a zone from UTC at an instant, in minutes (east positive). */
export type OffsetOf = (timeZone: string, instant: number) => number;

/**
 * Every instant at which `timeZone`'s clocks show `w`. The candidate offsets are the zone's
 * offsets a day either side (no zone has changed its offset twice within two days), and a
 * candidate counts only if the zone really has that offset at the instant it gives.
 */
export function wallTimeInstants(w: WallTime, timeZone: string): WallTimeInstants {
  const naive = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.millisecond);
  return floatingInstants(naive, timeZone);
}

/**
 * wallTimeInstants for a wall time given as "floating" epoch ms (the wall time read as if it
 * were UTC), the form the recurrence rules enumerate in. `offsetOf` lets a caller that maps
 * many wall times of one zone use a cached offset table (src/core/zone-offsets.ts).
 */
export function floatingInstants(
  naive: number,
  timeZone: string,
  offsetOf: OffsetOf = tzOffsetMinutes,
): WallTimeInstants {
  const before = offsetOf(timeZone, naive - DAY_MS);
  const after = offsetOf(timeZone, naive + DAY_MS);
  if (before === after) {
    const t = naive - before * 60_000;
    // the common case: one offset around, one instant (re-checked: a zone could in theory
    // change and change back within two days)
    if (offsetOf(timeZone, t) === before) return { kind: "exact", instants: [t] };
  }
  const found: number[] = [];
  for (const offset of before === after ? [before] : [before, after]) {
    const t = naive - offset * 60_000;
    if (offsetOf(timeZone, t) === offset) found.push(t);
  }
  found.sort((a, b) => a - b);
  const [first, second] = found;
  if (first !== undefined && second !== undefined && first !== second) {
    return { kind: "overlap", instants: [first, second] };
  }
  if (first !== undefined) return { kind: "exact", instants: [first] };
  // read with the offset in force before the change, the time lands after it, moved forward
  // by the gap's length
  return { kind: "gap", instants: [], shifted: naive - before * 60_000 };
}

/**
 * The one instant a one-shot due time written as a wall time means: a time the clocks skip
 * fires right after the gap, moved forward by the gap's length; a time they show twice fires
 * on its first occurrence (docs/clocks.md, "Wall times and DST").
 */
export function zonedWallTimeToInstant(w: WallTime, timeZone: string): number {
  const r = wallTimeInstants(w, timeZone);
  return r.kind === "gap" ? r.shifted : r.instants[0];
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** Offset of `timeZone` from UTC at `instant`, in minutes (east positive). */
export function tzOffsetMinutes(timeZone: string, instant: number): number {
  return Math.round(tzOffsetSeconds(timeZone, instant) / 60);
}

/**
 * Offset of `timeZone` from UTC at `instant`, in whole seconds (east positive): local mean
 * times before about 1900 are not whole minutes (Paris +0:09:21).
 */
function tzOffsetSeconds(timeZone: string, instant: number): number {
  let f = offsetFormatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      era: "short",
    });
    // bounded: zone names are validated (assertTimeZone) and IANA has a few hundred
    if (offsetFormatters.size < 1000) offsetFormatters.set(timeZone, f);
  }
  const parts: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(instant))) parts[p.type] = p.value;
  const year = Number(parts.year);
  const asUtc = Date.UTC(
    parts.era === "BC" || parts.era === "B" ? 1 - year : year,
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return (asUtc - Math.floor(instant / 1000) * 1000) / 1000;
}

/** What the clocks of a zone show at an instant, as text, and the zone's offset then. */
export interface ZonedText {
  /** "2026-03-02T09:00:00.000": the wall time, ISO without an offset. */
  readonly local: string;
  /** Offset from UTC in seconds, east positive. */
  readonly offsetSeconds: number;
}

/**
 * The instant as the clocks of `timeZone` show it, read through the one zone formatter here,
 * for the CLI's table times. Only for showable instants (isShowable).
 */
export function zonedText(ms: number, timeZone: string): ZonedText {
  const offsetSeconds = tzOffsetSeconds(timeZone, ms);
  return { local: localText(ms, offsetSeconds * 1000), offsetSeconds };
}

function localText(ms: number, offsetMs: number): string {
  return new Date(ms + offsetMs).toISOString().slice(0, -1);
}

/**
 * "2026-03-02T09:00:00.000+01:00": the instant as the clocks of `timeZone` show it (to the
 * minute: an RFC 3339 offset has no seconds).
 */
export function isoInZone(ms: number, timeZone: string): string {
  if (!isShowable(ms)) return isoInstant(ms);
  const offsetMinutes = tzOffsetMinutes(timeZone, ms);
  const local = localText(ms, offsetMinutes * 60_000);
  const sign = offsetMinutes < 0 ? "-" : "+";
  const abs = Math.abs(offsetMinutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, "0");
  const mm = String(abs % 60).padStart(2, "0");
  return `${local}${sign}${hh}:${mm}`;
}
