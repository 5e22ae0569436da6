import { shardOf } from "../../core/ids.js";
import { ruleFromParts, type Recurrence } from "../../core/recurrence/index.js";
import {
  advanceStep,
  occurrenceExpireAfterMs,
  type AdvanceFields,
  type MisfirePolicy,
  type SeriesAdvance,
} from "../../core/series-advance.js";
import { brokenReason, recurrenceOf, type RecurrenceFields } from "../../core/series.js";
import type { SqliteContext } from "./context.js";
import type { NextOccurrences } from "./series-occurrences.js";
import { SERIES_STEP_COLUMNS } from "./series-statements.js";

/**
 * A claim's series step row by row (series-advance.ts sends here the series claimed with no
 * other of their kind): each series read as one tuple of the columns its step needs
 * (seriesStepRows, STEP_COLUMN_PLACES), advanced on them (advanceStep), its row's advance
 * columns written by primary key, its next occurrence added to the claim's multi-row insert
 * with the template as read (text, never decoded). Only series whose `next_job_id` is among
 * `jobIds` advance.
 */
export function advanceRowWise(
  ctx: SqliteContext,
  seriesIds: readonly string[],
  jobIds: ReadonlySet<string>,
  now: number,
  newId: () => string,
  written: NextOccurrences,
): void {
  const rows = ctx.s.seriesStepRows.all(JSON.stringify(seriesIds)) as StepTuple[];
  const rules = new RuleCache();
  for (const t of rows) {
    const pending = t[C.nextJobId];
    if (pending === null || !jobIds.has(pending)) continue;
    if (t[DECODES] !== 1) {
      const reason = templateBreak(t[C.payload], t[C.targetOptions]);
      if (reason !== null) {
        ctx.s.scheduleBreak.run({ id: t[C.id], reason, now });
        continue;
      }
    }
    let a: SeriesAdvance;
    try {
      a = advanceStep(fieldsOf(t), t[C.expireAfterMs], () => rules.of(t), now);
    } catch (err) {
      ctx.s.scheduleBreak.run({ id: t[C.id], reason: brokenReason(err), now });
      continue;
    }
    const jobId = a.next === null ? null : newId();
    ctx.s.scheduleAdvance.run(
      a.next === null ? "ended" : "active",
      jobId,
      a.next?.at ?? null,
      a.next?.key ?? null,
      a.firedCount,
      a.missedCount,
      a.lastMisfireAt,
      a.catchUpFired,
      a.lastJobId,
      now,
      t[C.id],
    );
    if (a.next === null || jobId === null) continue;
    const group = {
      tenant: t[C.tenant],
      target: t[C.target],
      dueAt: a.next.at,
      bucket: ctx.bucketOf(a.next.at),
      nominal: a.next.key,
      expireAfterMs: occurrenceExpireAfterMs(
        t[C.misfire],
        t[C.expireAfterMs],
        t[C.misfireToleranceMs],
      ),
    };
    written.addRow(group, t[C.id], jobId, shardOf(jobId, ctx.shardCount), {
      payload: t[C.payload],
      targetOptions: t[C.targetOptions],
      maxAttempts: t[C.maxAttempts],
    });
  }
}

/**
 * Each column's place in a StepTuple: SERIES_STEP_COLUMNS' order (series-statements.ts; a
 * test checks the two agree).
 */
export const STEP_COLUMN_PLACES = Object.freeze({
  id: 0,
  tenant: 1,
  ruleKind: 2,
  rule: 3,
  timeZone: 4,
  gap: 5,
  overlap: 6,
  startAt: 7,
  endAt: 8,
  misfire: 9,
  misfireLimit: 10,
  misfireToleranceMs: 11,
  maxCount: 12,
  nextJobId: 13,
  nextAt: 14,
  firedCount: 15,
  missedCount: 16,
  lastMisfireAt: 17,
  catchUpFired: 18,
  target: 19,
  payload: 20,
  targetOptions: 21,
  maxAttempts: 22,
  expireAfterMs: 23,
});

const C = STEP_COLUMN_PLACES;
/** A StepTuple's last place: seriesStepRows' `decodes` (series-statements.ts DECODES). */
const DECODES = SERIES_STEP_COLUMNS.length;

/**
 * The endedReason of a series whose template does not decode, or null when it does: the
 * per-row step read the series (rowToSchedule: payload, then target_options) before anything
 * else, so such a series ended whatever its count or rule, and no occurrence that could not
 * be claimed was written. Asked only when SQLite's json_valid refused it (rare).
 */
export function templateBreak(payload: string, targetOptions: string | null): string | null {
  try {
    JSON.parse(payload);
    if (targetOptions !== null) JSON.parse(targetOptions);
    return null;
  } catch (err) {
    return brokenReason(err);
  }
}

/** A series row as seriesStepRows reads it (raw). */
type StepTuple = [
  id: string,
  tenant: string,
  ruleKind: "cron" | "rrule",
  rule: string,
  timeZone: string,
  gap: "skip" | "shift",
  overlap: "first" | "both",
  startAt: number | null,
  endAt: number | null,
  misfire: MisfirePolicy,
  misfireLimit: number,
  misfireToleranceMs: number,
  maxCount: number | null,
  nextJobId: string | null,
  nextAt: number | null,
  firedCount: number,
  missedCount: number,
  lastMisfireAt: number | null,
  catchUpFired: number,
  target: string,
  payload: string,
  targetOptions: string | null,
  maxAttempts: number,
  expireAfterMs: number | null,
  /** DECODES: 1 when the template decodes. */
  decodes: number | null,
];

function fieldsOf(t: StepTuple): AdvanceFields {
  return {
    misfire: t[C.misfire],
    misfireLimit: t[C.misfireLimit],
    misfireToleranceMs: t[C.misfireToleranceMs],
    count: t[C.maxCount],
    nextJobId: t[C.nextJobId],
    nextAt: t[C.nextAt],
    firedCount: t[C.firedCount],
    missedCount: t[C.missedCount],
    lastMisfireAt: t[C.lastMisfireAt],
    catchUpFired: t[C.catchUpFired],
  };
}

/**
 * The compiled rule of a row, the last one kept: rows read together mostly share a rule, and
 * comparing seven columns costs less than building the spec recurrenceOf compares.
 */
class RuleCache {
  private last: { readonly t: StepTuple; readonly r: Recurrence } | null = null;

  of(t: StepTuple): Recurrence {
    const last = this.last;
    if (last !== null && sameRuleColumns(last.t, t)) return last.r;
    const r = recurrenceOf(ruleFieldsAt(t, C.ruleKind));
    this.last = { t, r };
    return r;
  }
}

/**
 * The rule of a raw series row whose seven rule columns (rule_kind, rule, time_zone, gap,
 * overlap, start_at, end_at) stand in that order from `at`: the row-wise read's and the
 * set-wise groups' (series-advance.ts) alike.
 */
export function ruleFieldsAt(t: readonly unknown[], at: number): RecurrenceFields {
  return {
    rule: ruleFromParts(t[at] as "cron" | "rrule", t[at + 1] as string),
    timeZone: t[at + 2] as string,
    gap: t[at + 3] as RecurrenceFields["gap"],
    overlap: t[at + 4] as RecurrenceFields["overlap"],
    startAt: t[at + 5] as number | null,
    endAt: t[at + 6] as number | null,
  };
}

function sameRuleColumns(a: StepTuple, b: StepTuple): boolean {
  for (let i = C.ruleKind; i <= C.endAt; i++) if (a[i] !== b[i]) return false;
  return true;
}
