import type { Occurrence, Recurrence } from "./recurrence/index.js";

/*
 * A claim's series step, on the fields it reads (core/series.ts advanceSeries builds the
 * series record and job from it; a store may run it on a row's columns without building the
 * record: stores/sqlite/series-advance.ts). Kept apart from series.ts so both import it
 * without a cycle.
 */

/**
 * What a series does with occurrences missed while nothing fired (downtime):
 *  - `fire-once`: the oldest missed occurrence fires, standing for all of them; the series then
 *    goes on from the first occurrence after now (the default);
 *  - `fire-all`: every missed occurrence fires, oldest first, at most `misfireLimit` of them
 *    in one catch-up; the rest are skipped;
 *  - `skip`: none fires (the one pending expires after `misfireToleranceMs`, recorded); the
 *    series goes on from the first occurrence after now.
 * Skipped occurrences are counted in `missedCount`, and `lastMisfireAt` says when.
 */
export type MisfirePolicy = "fire-once" | "fire-all" | "skip";

/** Most occurrences counted one by one when skipping a backlog (then one jump to now). */
const MAX_SKIP_STEPS = 10_000;

/** What a claim's series step reads of a series (a Schedule has it all; series.ts). */
export interface AdvanceFields {
  readonly misfire: MisfirePolicy;
  readonly misfireLimit: number;
  readonly misfireToleranceMs: number;
  readonly count: number | null;
  readonly nextJobId: string | null;
  readonly nextAt: number | null;
  readonly firedCount: number;
  readonly missedCount: number;
  readonly lastMisfireAt: number | null;
  readonly catchUpFired: number;
}

/**
 * What a claim of a series' pending occurrence changes: the occurrence to point at next (null:
 * the series ends), its counters, and how many occurrences were counted missed.
 */
export interface SeriesAdvance {
  readonly next: Occurrence | null;
  readonly firedCount: number;
  readonly lastJobId: string | null;
  readonly missedCount: number;
  readonly lastMisfireAt: number | null;
  readonly catchUpFired: number;
  readonly missed: number;
}

/**
 * advanceSeries' decision, on the fields it reads: `recurrence` gives the series' compiled
 * rule (asked only when the series goes on), `expireAfterMs` is its template's. A store's
 * claim may run it on a row's columns without building the Schedule (sqlite/series-advance.ts).
 */
export function advanceStep(
  s: AdvanceFields,
  expireAfterMs: number | null,
  recurrence: () => Recurrence,
  now: number,
): SeriesAdvance {
  const fired = s.firedCount + 1;
  const claimedAt = s.nextAt ?? now;
  // skip: the pending occurrence itself expires when it is claimed past its tolerance
  const claimedMissed =
    s.misfire === "skip" && now - claimedAt > (expireAfterMs ?? s.misfireToleranceMs) ? 1 : 0;
  if (s.count !== null && fired >= s.count) {
    return {
      next: null,
      firedCount: fired,
      lastJobId: s.nextJobId,
      missedCount: s.missedCount,
      lastMisfireAt: s.lastMisfireAt,
      catchUpFired: s.catchUpFired,
      missed: claimedMissed,
    };
  }
  const r = recurrence();
  let next = r.next(claimedAt);
  let missed = claimedMissed;
  let catchUp = 0;
  if (next !== null && next.at <= now) {
    if (s.misfire === "fire-all" && s.catchUpFired < s.misfireLimit) {
      catchUp = s.catchUpFired + 1;
    } else {
      const skipped = skipPast(r, next, now);
      next = skipped.next;
      missed += skipped.count;
    }
  }
  return {
    next,
    firedCount: fired,
    lastJobId: s.nextJobId,
    missedCount: s.missedCount + missed,
    lastMisfireAt: missed > 0 ? now : s.lastMisfireAt,
    catchUpFired: catchUp,
    missed,
  };
}

/**
 * The last skipPast answer of each compiled rule (compileRecurrence shares one per spec). The
 * series of one rule missed together (a catch-up after downtime) step from the same missed
 * occurrence to the same now, and each walked the whole chain of missed occurrences again:
 * up to MAX_SKIP_STEPS next() calls a series, where the rule's own cache of one question
 * helps none (each step asks a new one).
 */
const lastSkip = new WeakMap<
  Recurrence,
  { from: number; now: number; next: Occurrence | null; count: number }
>();

/** Steps past every occurrence at or before `now`, counting them (bounded, then one jump). */
function skipPast(
  r: Recurrence,
  first: Occurrence,
  now: number,
): { next: Occurrence | null; count: number } {
  const known = lastSkip.get(r);
  if (known !== undefined && known.from === first.at && known.now === now) {
    return { next: known.next, count: known.count };
  }
  let next: Occurrence | null = first;
  let count = 0;
  while (next !== null && next.at <= now && count < MAX_SKIP_STEPS) {
    count++;
    next = r.next(next.at);
  }
  if (next !== null && next.at <= now) next = r.next(now);
  lastSkip.set(r, { from: first.at, now, next, count });
  return { next, count };
}

/**
 * An occurrence job's expireAfterMs: the template's, or under `skip` the misfire tolerance
 * when the template has none (the occurrence expires instead of firing that late).
 */
export function occurrenceExpireAfterMs(
  misfire: MisfirePolicy,
  expireAfterMs: number | null,
  misfireToleranceMs: number,
): number | null {
  return misfire === "skip" ? (expireAfterMs ?? misfireToleranceMs) : expireAfterMs;
}
