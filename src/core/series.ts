import type { JsonValue, NewJob } from "./job.js";
import { advanceStep, occurrenceExpireAfterMs, type MisfirePolicy } from "./series-advance.js";
import {
  compileRecurrence,
  ruleParts,
  type Occurrence,
  type Recurrence,
} from "./recurrence/index.js";

/**
 * A recurring series (a "schedule"): a rule in a time zone and a job template. Only its next
 * occurrence exists as a job, a plain one-shot job carrying `scheduleId` and `nominal`, so
 * buckets, the hot index, the timing wheel and the poll cost are those of one-shot jobs
 * however many series exist. The store writes the following occurrence in the transaction
 * that claims the current one (`advanceSeries`, called by each store's claim): a handler
 * that hangs, a job that goes dead or a process that dies after the claim cannot stop the
 * series, and a crash before the commit leaves the current occurrence pending, to be claimed
 * (and advanced) again. The schedule row names its pending occurrence (`nextJobId`); a claim
 * advances the series only from that job, so a re-claim after a lease ran out advances
 * nothing twice (docs/recurring.md).
 *
 * ```
 *          create (first occurrence written)
 *             |
 *             v        pause (pending occurrence cancelled)
 *          active  <------------------------------------>  paused
 *             |            resume (next after now written)
 *             | last occurrence claimed (end or count reached)
 *             v
 *           ended
 * ```
 * `delete` removes the record from any state, cancelling its pending occurrence.
 */
export type ScheduleState = "active" | "paused" | "ended";

export const SCHEDULE_STATES: readonly ScheduleState[] = Object.freeze([
  "active",
  "paused",
  "ended",
]);

export type { MisfirePolicy };

export const MISFIRE_POLICIES: readonly MisfirePolicy[] = Object.freeze([
  "fire-once",
  "fire-all",
  "skip",
]);

/** A 5- or 6-field cron expression, or an RFC 5545 RRULE. */
export type SeriesRule = { readonly cron: string } | { readonly rrule: string };

/** What every occurrence job is made from. */
export interface ScheduleTemplate {
  readonly target: string;
  readonly payload: JsonValue;
  /** Target options such as webhook headers, or null. */
  readonly targetOptions: Readonly<Record<string, unknown>> | null;
  readonly maxAttempts: number;
  /**
   * Misfire tolerance in ms: an occurrence claimed later than this after its time expires
   * instead of firing. Null: fire however late (the `skip` policy uses its own tolerance).
   */
  readonly expireAfterMs: number | null;
}

/** A stored series, as every store returns it. Times are epoch ms. */
export interface Schedule {
  /** Time-sortable id (ULID), like a job's. */
  readonly id: string;
  readonly tenant: string;
  /** Idempotency key, unique per tenant among stored schedules; null when none was given. */
  readonly key: string | null;
  readonly rule: SeriesRule;
  /** IANA zone the rule's wall times are read in. */
  readonly timeZone: string;
  /** A wall time that does not exist (spring forward): fire after the gap, or skip it. */
  readonly gap: "skip" | "shift";
  /** A wall time that happens twice (fall back): fire on the first, or on both. */
  readonly overlap: "first" | "both";
  readonly misfire: MisfirePolicy;
  /** `fire-all`: most missed occurrences fired in one catch-up. */
  readonly misfireLimit: number;
  /** `skip`: how late an occurrence may fire before it counts as missed, ms. */
  readonly misfireToleranceMs: number;
  /** No occurrence before this instant, or null. */
  readonly startAt: number | null;
  /** No occurrence after this instant, or null. */
  readonly endAt: number | null;
  /** Most occurrences the series fires, or null for no limit. */
  readonly count: number | null;
  readonly template: ScheduleTemplate;
  readonly state: ScheduleState;
  /** Bumped on every change made through the API (not by an occurrence firing). */
  readonly version: number;
  /** The pending occurrence's job, or null (paused, ended). */
  readonly nextJobId: string | null;
  /** The pending occurrence's time and nominal time, or null. */
  readonly nextAt: number | null;
  readonly nextNominal: string | null;
  /** Occurrences claimed to fire so far. */
  readonly firedCount: number;
  /** Occurrences skipped by the misfire policy so far. */
  readonly missedCount: number;
  /** When occurrences were last found missed, or null. */
  readonly lastMisfireAt: number | null;
  /** `fire-all`: missed occurrences fired in the catch-up under way. */
  readonly catchUpFired: number;
  /** The last occurrence claimed (its job tells the last outcome), or null. */
  readonly lastJobId: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /**
   * Why the series ended when a claim could not advance it (its stored rule no longer
   * compiles, its row is corrupt): the occurrence claimed still fired, nothing followed.
   * Null otherwise (an end or count reached, or still going).
   */
  readonly endedReason: string | null;
}

/**
 * A new series' record from its validated definition: active, nothing fired yet. Written
 * out field by field: on Node 20's V8 an object spread followed by keys the source lacks
 * (`{ ...def, state, version, ... }`) makes a new hidden class on every call, 85-250 us a
 * series and a heap of garbage maps (measured on 100,000 creates); spreads that only
 * overwrite keys the source has keep one class and cost about a microsecond.
 */
export function newSeriesRecord(def: SeriesDefinitionFields, now: number): Schedule {
  return {
    id: def.id,
    tenant: def.tenant,
    key: def.key,
    rule: def.rule,
    timeZone: def.timeZone,
    gap: def.gap,
    overlap: def.overlap,
    misfire: def.misfire,
    misfireLimit: def.misfireLimit,
    misfireToleranceMs: def.misfireToleranceMs,
    startAt: def.startAt,
    endAt: def.endAt,
    count: def.count,
    template: def.template,
    state: "active",
    version: 1,
    nextJobId: null,
    nextAt: null,
    nextNominal: null,
    firedCount: 0,
    missedCount: 0,
    lastMisfireAt: null,
    catchUpFired: 0,
    lastJobId: null,
    createdAt: now,
    updatedAt: now,
    endedReason: null,
  };
}

/** What a new series is made from: its validated definition (series-input.ts). */
export type SeriesDefinitionFields = Pick<
  Schedule,
  | "id"
  | "tenant"
  | "key"
  | "rule"
  | "timeZone"
  | "gap"
  | "overlap"
  | "misfire"
  | "misfireLimit"
  | "misfireToleranceMs"
  | "startAt"
  | "endAt"
  | "count"
  | "template"
>;

/** Default `misfireLimit`: a catch-up of `fire-all` fires at most this many. */
export const DEFAULT_MISFIRE_LIMIT = 100;
/** Default `misfireToleranceMs` of `skip`: one minute late still fires. */
export const DEFAULT_MISFIRE_TOLERANCE_MS = 60_000;

/** The fields of a series that make its rule (what recurrenceOf compiles). */
export type RecurrenceFields = Pick<
  Schedule,
  "rule" | "timeZone" | "gap" | "overlap" | "startAt" | "endAt"
>;

/**
 * The spec of the last rule recurrenceOf compiled, with its answer. A claim's series step
 * asks for the rule of every occurrence it advances, and the series claimed together mostly
 * share one: compared field by field, a repeat skips compileRecurrence's cache key (four
 * JSON-quoted texts built per call) and its LRU move. A scratch drain of 20,000 daily series
 * of ten rules (SQLite, claims of 500): the claim's step 8.3-10.1 us an occurrence before,
 * 5.7-6.7 us after (CPU, in the claim's transaction).
 */
let lastRule: { readonly spec: RecurrenceFields; readonly recurrence: Recurrence } | null = null;

function sameRule(a: RecurrenceFields, b: RecurrenceFields): boolean {
  const ra = ruleParts(a.rule);
  const rb = ruleParts(b.rule);
  return (
    ra.kind === rb.kind &&
    ra.text === rb.text &&
    a.timeZone === b.timeZone &&
    a.gap === b.gap &&
    a.overlap === b.overlap &&
    a.startAt === b.startAt &&
    a.endAt === b.endAt
  );
}

/**
 * The schedule's rule, compiled (compileRecurrence caches it by its whole spec; the last
 * spec answered is kept in front of that cache). Throws InvalidJobError for a rule that is
 * not one.
 */
export function recurrenceOf(s: RecurrenceFields): Recurrence {
  const last = lastRule;
  if (last !== null && sameRule(last.spec, s)) return last.recurrence;
  const recurrence = compileRecurrence({
    rule: s.rule,
    timeZone: s.timeZone,
    gap: s.gap,
    overlap: s.overlap,
    ...(s.startAt === null ? {} : { start: s.startAt }),
    ...(s.endAt === null ? {} : { end: s.endAt }),
  });
  lastRule = {
    spec: {
      rule: s.rule,
      timeZone: s.timeZone,
      gap: s.gap,
      overlap: s.overlap,
      startAt: s.startAt,
      endAt: s.endAt,
    },
    recurrence,
  };
  return recurrence;
}

/**
 * The instants of a series' next `count` occurrences as its surfaces show them: the pending
 * one, then those the rule gives after it (the pending one may lie in the past during a
 * catch-up, so the rest follow it rather than now), within the series' `count`. Empty
 * unless the series is active.
 */
export function upcomingOccurrences(s: Schedule, count: number): number[] {
  if (s.state !== "active" || s.nextAt === null) return [];
  const left = s.count === null ? count : Math.min(count, s.count - s.firedCount);
  if (left <= 1) return left === 1 ? [s.nextAt] : [];
  return [
    s.nextAt,
    ...recurrenceOf(s)
      .preview(s.nextAt, left - 1)
      .map((o) => o.at),
  ];
}

/** The occurrence job of `s` at `o`: the template's fields, no idempotency key (the series has it). */
export function occurrenceJob(s: Schedule, o: Occurrence, id: string): NewJob {
  const t = s.template;
  return {
    id,
    tenant: s.tenant,
    key: null,
    dueAt: o.at,
    payload: t.payload,
    target: t.target,
    targetOptions: t.targetOptions,
    maxAttempts: t.maxAttempts,
    expireAfterMs: occurrenceExpireAfterMs(s.misfire, t.expireAfterMs, s.misfireToleranceMs),
    scheduleId: s.id,
    nominal: o.key,
  };
}

/**
 * The series pointed at `next` (or ended when null), with its job; `counts` are the
 * claim's changes to its counters, set in the same copy (one spread of keys the series has:
 * see newSeriesRecord).
 */
export function withNext(
  s: Schedule,
  next: Occurrence | null,
  newId: () => string,
  now: number,
  counts: Partial<Pick<Schedule, CountField>> = {},
): { schedule: Schedule; job: NewJob | null } {
  if (next === null) {
    return {
      schedule: {
        ...s,
        ...counts,
        state: "ended",
        nextJobId: null,
        nextAt: null,
        nextNominal: null,
        updatedAt: now,
      },
      job: null,
    };
  }
  const job = occurrenceJob(s, next, newId());
  return {
    schedule: {
      ...s,
      ...counts,
      state: "active",
      nextJobId: job.id,
      nextAt: next.at,
      nextNominal: next.key,
      updatedAt: now,
    },
    job,
  };
}

/** The counters a claim's series step changes (advanceSeries). */
type CountField = "firedCount" | "lastJobId" | "missedCount" | "lastMisfireAt" | "catchUpFired";

/**
 * What skipping the pending occurrence writes: the occurrence after it (ended past the
 * rule's end), nothing counted as fired, the version bumped (a caller's change, which an
 * If-Match sees). skipNextOccurrence writes it, and so does a cancel of the occurrence as a
 * job (the stores' jobCancel): cancelling an occurrence skips it and the series goes on;
 * deleting the series is how to end it.
 */
export function skipOccurrence(
  s: Schedule,
  now: number,
  newId: () => string,
): { schedule: Schedule; job: NewJob | null } {
  const bumped = { ...s, version: s.version + 1 };
  return withNext(bumped, recurrenceOf(s).next(s.nextAt ?? now), newId, now);
}

/** The first occurrence after `now` (never before the series' start), or null. */
export function firstOccurrenceAfter(s: Schedule, now: number): Occurrence | null {
  return recurrenceOf(s).next(now);
}

/**
 * What a claim of the series' pending occurrence writes, in the claim's transaction: the
 * series counts the occurrence, applies its misfire policy to occurrences already past, and
 * points at its next occurrence (whose job is returned to be inserted), or ends. `s` must be
 * the series whose `nextJobId` is the claimed job: the caller checks it, so a job claimed a
 * second time (its lease ran out) advances nothing.
 */
export function advanceSeries(
  s: Schedule,
  now: number,
  newId: () => string,
): { schedule: Schedule; job: NewJob | null; missed: number } {
  const a = advanceStep(s, s.template.expireAfterMs, () => recurrenceOf(s), now);
  // the result built field by field, not `{ ...withNext(...), missed }` (see newSeriesRecord)
  const { schedule, job } = withNext(s, a.next, newId, now, {
    firedCount: a.firedCount,
    lastJobId: a.lastJobId,
    missedCount: a.missedCount,
    lastMisfireAt: a.lastMisfireAt,
    catchUpFired: a.catchUpFired,
  });
  return { schedule, job, missed: a.missed };
}

/** Longest `endedReason` kept (the error's message, cut). */
const MAX_ENDED_REASON = 500;

/**
 * One claimed occurrence's series step: `advanced` (advanceSeries, or the `step` given:
 * skipOccurrence for a cancelled occurrence), or `broken` when the series cannot be
 * advanced (`read` or the rule throws: a stored rule that no longer compiles, a corrupt
 * row). A broken series is recorded as ended with the reason and the claim goes on: one bad
 * series must not roll back the claim of every other job in the batch (which would then be
 * claimed, and fail, again on every poll), nor refuse a cancel.
 */
export type SeriesStep =
  | { readonly kind: "advanced"; readonly schedule: Schedule; readonly job: NewJob | null }
  | { readonly kind: "broken"; readonly reason: string };

export function stepSeries(
  read: () => Schedule,
  now: number,
  newId: () => string,
  step: (
    s: Schedule,
    now: number,
    newId: () => string,
  ) => {
    schedule: Schedule;
    job: NewJob | null;
  } = advanceSeries,
): SeriesStep {
  try {
    const { schedule, job } = step(read(), now, newId);
    return { kind: "advanced", schedule, job };
  } catch (err) {
    return { kind: "broken", reason: brokenReason(err) };
  }
}

/** The `endedReason` of a series ended because advancing it threw `err` (see stepSeries). */
export function brokenReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return `the series could not be advanced: ${message}`.slice(0, MAX_ENDED_REASON);
}
