import { floatingInstants } from "../wall-time.js";
import { cachedOffsetMinutes } from "../zone-offsets.js";
import type { GapPolicy, Occurrence, OccurrenceMapping, OverlapPolicy } from "./types.js";
import type { WallSequence } from "./wall-sequence.js";

/**
 * From wall times to instants (docs/recurring.md): each wall time of the sequence is mapped
 * with floatingInstants; a time the clocks skip fires moved forward by the gap (`shift`) or
 * not at all (`skip`); a time they show twice fires on the first instant (`first`) or both.
 *
 * Instants follow wall times in order except near a change of offset: a shifted 02:30 fires
 * at 03:30, after a 03:15 of the same night, and the repeat of a 02:30 comes after a 02:45's
 * first instant. So next() looks back, and ahead, by the change's size (the difference of
 * the offsets a day either side), and takes the earliest instant after `after`; away from
 * a change that size is 0 and one wall time is read.
 */

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** Wall times read at most per next(): a change spans at most hours, a rule at least a second. */
const MAX_CANDIDATES = 100_000;

/** The size of an offset change near `t` (floating or instant ms), in ms; 0 away from one. */
function changeSpan(timeZone: string, t: number): number {
  const before = cachedOffsetMinutes(timeZone, t - DAY_MS);
  const after = cachedOffsetMinutes(timeZone, t + DAY_MS);
  return Math.abs(before - after) * MINUTE_MS;
}

function isoWall(floating: number): string {
  return new Date(floating).toISOString().slice(0, 19);
}

interface Candidate {
  readonly at: number;
  readonly mapping: OccurrenceMapping;
}

/** The instants one wall time fires at, under the policies. */
function instantsOf(
  floating: number,
  timeZone: string,
  gap: GapPolicy,
  overlap: OverlapPolicy,
): Candidate[] {
  const r = floatingInstants(floating, timeZone, cachedOffsetMinutes);
  if (r.kind === "exact") return [{ at: r.instants[0], mapping: "exact" }];
  if (r.kind === "gap") return gap === "shift" ? [{ at: r.shifted, mapping: "gap-shifted" }] : [];
  const first: Candidate = { at: r.instants[0], mapping: "overlap-first" };
  return overlap === "both" ? [first, { at: r.instants[1], mapping: "overlap-second" }] : [first];
}

/** The earliest occurrence strictly after the instant `after`, or null. */
export function nextOccurrence(
  seq: WallSequence,
  timeZone: string,
  gap: GapPolicy,
  overlap: OverlapPolicy,
  after: number,
): Occurrence | null {
  const wallNow = after + cachedOffsetMinutes(timeZone, after) * MINUTE_MS;
  let cursor = wallNow - changeSpan(timeZone, after);
  let best: Occurrence | null = null;
  let horizon = Number.POSITIVE_INFINITY;
  for (let i = 0; i < MAX_CANDIDATES; i++) {
    const w = seq.after(cursor);
    if (w === null || w > horizon) break;
    cursor = w;
    for (const c of instantsOf(w, timeZone, gap, overlap)) {
      // ties (a shifted 02:30 landing on a 03:30): the earlier wall time keeps the instant
      if (c.at > after && (best === null || c.at < best.at)) {
        const nominal = isoWall(w);
        const key = c.mapping === "overlap-second" ? `${nominal}#2` : nominal;
        best = { at: c.at, nominal, key, mapping: c.mapping };
      }
    }
    if (best !== null && horizon === Number.POSITIVE_INFINITY) {
      horizon = w + changeSpan(timeZone, w);
      if (horizon === w) break;
    }
  }
  return best;
}
