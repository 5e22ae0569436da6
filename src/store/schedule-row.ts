import type { JsonValue } from "../core/job.js";
import { ruleFromParts, ruleParts } from "../core/recurrence/index.js";
import type { MisfirePolicy, Schedule, ScheduleState } from "../core/series.js";

/**
 * A series as both stores keep it: one row of `schedules`, these columns (snake_case, the
 * same names and order in SQLite and PostgreSQL), JSON as text. Shared so the two stores
 * cannot read or write a series differently.
 */
export interface ScheduleRow {
  id: string;
  tenant: string;
  key: string | null;
  rule_kind: "cron" | "rrule";
  rule: string;
  time_zone: string;
  gap: "skip" | "shift";
  overlap: "first" | "both";
  misfire: MisfirePolicy;
  misfire_limit: number;
  misfire_tolerance_ms: number;
  start_at: number | null;
  end_at: number | null;
  max_count: number | null;
  target: string;
  payload: string;
  target_options: string | null;
  max_attempts: number;
  expire_after_ms: number | null;
  state: ScheduleState;
  version: number;
  next_job_id: string | null;
  next_at: number | null;
  next_nominal: string | null;
  fired_count: number;
  missed_count: number;
  last_misfire_at: number | null;
  catch_up_fired: number;
  last_job_id: string | null;
  created_at: number;
  updated_at: number;
  ended_reason: string | null;
}

export const SCHEDULE_COLUMNS: readonly (keyof ScheduleRow)[] = Object.freeze([
  "id",
  "tenant",
  "key",
  "rule_kind",
  "rule",
  "time_zone",
  "gap",
  "overlap",
  "misfire",
  "misfire_limit",
  "misfire_tolerance_ms",
  "start_at",
  "end_at",
  "max_count",
  "target",
  "payload",
  "target_options",
  "max_attempts",
  "expire_after_ms",
  "state",
  "version",
  "next_job_id",
  "next_at",
  "next_nominal",
  "fired_count",
  "missed_count",
  "last_misfire_at",
  "catch_up_fired",
  "last_job_id",
  "created_at",
  "updated_at",
  "ended_reason",
]);

/**
 * The columns a claim's series step writes (advanceSeries changes no other): the claim
 * updates only these, so the row's indexed columns (tenant, key) and its template are not
 * rewritten for every occurrence fired.
 */
export const SCHEDULE_ADVANCE_COLUMNS: readonly (keyof ScheduleRow)[] = Object.freeze([
  "id",
  "state",
  "next_job_id",
  "next_at",
  "next_nominal",
  "fired_count",
  "missed_count",
  "last_misfire_at",
  "catch_up_fired",
  "last_job_id",
  "updated_at",
]);

/**
 * The values a claim's series step writes, in SCHEDULE_ADVANCE_COLUMNS order, read straight
 * from the series (no template encoded: scheduleToRow would JSON-encode the payload of
 * every occurrence fired only to drop it).
 */
export function scheduleAdvanceValues(s: Schedule): unknown[] {
  return [
    s.id,
    s.state,
    s.nextJobId,
    s.nextAt,
    s.nextNominal,
    s.firedCount,
    s.missedCount,
    s.lastMisfireAt,
    s.catchUpFired,
    s.lastJobId,
    s.updatedAt,
  ];
}

export function scheduleToRow(s: Schedule): ScheduleRow {
  const t = s.template;
  const rule = ruleParts(s.rule);
  return {
    id: s.id,
    tenant: s.tenant,
    key: s.key,
    rule_kind: rule.kind,
    rule: rule.text,
    time_zone: s.timeZone,
    gap: s.gap,
    overlap: s.overlap,
    misfire: s.misfire,
    misfire_limit: s.misfireLimit,
    misfire_tolerance_ms: s.misfireToleranceMs,
    start_at: s.startAt,
    end_at: s.endAt,
    max_count: s.count,
    target: t.target,
    payload: JSON.stringify(t.payload),
    target_options: t.targetOptions === null ? null : JSON.stringify(t.targetOptions),
    max_attempts: t.maxAttempts,
    expire_after_ms: t.expireAfterMs,
    state: s.state,
    version: s.version,
    next_job_id: s.nextJobId,
    next_at: s.nextAt,
    next_nominal: s.nextNominal,
    fired_count: s.firedCount,
    missed_count: s.missedCount,
    last_misfire_at: s.lastMisfireAt,
    catch_up_fired: s.catchUpFired,
    last_job_id: s.lastJobId,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    ended_reason: s.endedReason,
  };
}

/** The row's values in SCHEDULE_COLUMNS order (positional statements). */
export function scheduleRowValues(r: ScheduleRow): unknown[] {
  return SCHEDULE_COLUMNS.map((c) => r[c]);
}

export function rowToSchedule(r: ScheduleRow): Schedule {
  return {
    id: r.id,
    tenant: r.tenant,
    key: r.key,
    rule: ruleFromParts(r.rule_kind, r.rule),
    timeZone: r.time_zone,
    gap: r.gap,
    overlap: r.overlap,
    misfire: r.misfire,
    misfireLimit: Number(r.misfire_limit),
    misfireToleranceMs: Number(r.misfire_tolerance_ms),
    startAt: num(r.start_at),
    endAt: num(r.end_at),
    count: num(r.max_count),
    template: {
      target: r.target,
      payload: JSON.parse(r.payload) as JsonValue,
      targetOptions:
        r.target_options === null
          ? null
          : (JSON.parse(r.target_options) as Record<string, unknown>),
      maxAttempts: Number(r.max_attempts),
      expireAfterMs: num(r.expire_after_ms),
    },
    state: r.state,
    version: Number(r.version),
    nextJobId: r.next_job_id,
    nextAt: num(r.next_at),
    nextNominal: r.next_nominal,
    firedCount: Number(r.fired_count),
    missedCount: Number(r.missed_count),
    lastMisfireAt: num(r.last_misfire_at),
    catchUpFired: Number(r.catch_up_fired),
    lastJobId: r.last_job_id,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    endedReason: r.ended_reason ?? null,
  };
}

function num(v: number | null): number | null {
  return v === null ? null : Number(v);
}
