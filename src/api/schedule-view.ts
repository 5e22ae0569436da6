import { isoInstant } from "../core/instant-text.js";
import type { JobStatus } from "../core/job.js";
import { describeRecurrence, ruleParts, type Occurrence } from "../core/recurrence/index.js";
import { upcomingOccurrences, type MisfirePolicy, type ScheduleState } from "../core/series.js";
import { isoInZone } from "../core/wall-time.js";
import type { ScheduleInfo } from "./series.js";

/**
 * A recurring series as every surface shows it in JSON: the HTTP API, `duetime schedule
 * ... --json`, and the MCP tools and dashboard built on it. The field names are those of
 * the input (`cron`, `rrule`, `start`, `end`, `headers`...), so a view's fields can be sent
 * back as a PATCH; times are ISO, the pending occurrence's also in the series' zone.
 */
export interface ScheduleView {
  id: string;
  tenant: string;
  key: string | null;
  /** The rule: exactly one of `cron` and `rrule` is set. */
  cron: string | null;
  rrule: string | null;
  /** The rule in English, with its zone: "every weekday at 09:00 (Europe/Paris)". */
  description: string;
  timeZone: string;
  gap: "skip" | "shift";
  overlap: "first" | "both";
  misfire: MisfirePolicy;
  misfireLimit: number;
  misfireToleranceMs: number;
  start: string | null;
  end: string | null;
  count: number | null;
  target: string;
  headers: Record<string, string> | null;
  payload: unknown;
  maxAttempts: number;
  expireAfterMs: number | null;
  state: ScheduleState;
  version: number;
  /** The pending occurrence's job, its instant (UTC and in timeZone) and nominal wall time. */
  nextJobId: string | null;
  nextAt: string | null;
  nextAtLocal: string | null;
  nextNominal: string | null;
  firedCount: number;
  missedCount: number;
  lastMisfireAt: string | null;
  /** The last claimed occurrence's job and its state, or null before the first. */
  lastOutcome: { jobId: string; status: JobStatus } | null;
  createdAt: string;
  updatedAt: string;
  /** Why the series ended when a claim could not advance it (a stored rule that no longer compiles), or null. */
  endedReason: string | null;
}

export function scheduleView(s: ScheduleInfo): ScheduleView {
  const t = s.template;
  const headers = t.targetOptions?.headers;
  const rule = ruleParts(s.rule);
  return {
    id: s.id,
    tenant: s.tenant,
    key: s.key,
    cron: rule.kind === "cron" ? rule.text : null,
    rrule: rule.kind === "rrule" ? rule.text : null,
    description: describe(s),
    timeZone: s.timeZone,
    gap: s.gap,
    overlap: s.overlap,
    misfire: s.misfire,
    misfireLimit: s.misfireLimit,
    misfireToleranceMs: s.misfireToleranceMs,
    start: orNull(s.startAt, isoInstant),
    end: orNull(s.endAt, isoInstant),
    count: s.count,
    target: t.target,
    headers:
      typeof headers === "object" && headers !== null ? (headers as Record<string, string>) : null,
    payload: t.payload,
    maxAttempts: t.maxAttempts,
    expireAfterMs: t.expireAfterMs,
    state: s.state,
    version: s.version,
    nextJobId: s.nextJobId,
    nextAt: orNull(s.nextAt, isoInstant),
    nextAtLocal: orNull(s.nextAt, (ms) => isoInZone(ms, s.timeZone)),
    nextNominal: s.nextNominal,
    firedCount: s.firedCount,
    missedCount: s.missedCount,
    lastMisfireAt: orNull(s.lastMisfireAt, isoInstant),
    lastOutcome: s.lastOutcome,
    createdAt: isoInstant(s.createdAt),
    updatedAt: isoInstant(s.updatedAt),
    endedReason: s.endedReason,
  };
}

/** One occurrence of a preview: its instant in UTC and in the series' zone, and how it mapped. */
export interface OccurrenceView {
  at: string;
  atLocal: string;
  /** The wall time the rule named (ISO without offset; a gap-shifted one is the skipped time). */
  nominal: string;
  mapping: Occurrence["mapping"];
}

export function occurrenceView(o: Occurrence, timeZone: string): OccurrenceView {
  return {
    at: isoInstant(o.at),
    atLocal: isoInZone(o.at, timeZone),
    nominal: o.nominal,
    mapping: o.mapping,
  };
}

/** A coming occurrence of a series: its instant in UTC and in the series' zone. */
export interface ComingOccurrence {
  readonly at: string;
  readonly atLocal: string;
}

/**
 * The pending occurrence and those after it, `count` at most (none unless active): what the
 * dashboard and the MCP tools show beside a series' view (the API answers them at
 * /v1/schedules/{id}/next, with how each mapped).
 */
export function comingOccurrences(s: ScheduleInfo, count: number): ComingOccurrence[] {
  return upcomingOccurrences(s, count).map((at) => ({
    at: isoInstant(at),
    atLocal: isoInZone(at, s.timeZone),
  }));
}

function orNull(ms: number | null, show: (ms: number) => string): string | null {
  return ms === null ? null : show(ms);
}

/** A stored rule in words; one stored before the describer knew its form shows as itself. */
function describe(s: ScheduleInfo): string {
  try {
    return describeRecurrence(s.rule, s.timeZone, s.startAt ?? undefined);
  } catch {
    const { kind, text } = ruleParts(s.rule);
    return kind === "cron" ? `cron "${text}"` : `RRULE ${text}`;
  }
}
