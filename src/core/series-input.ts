import { InvalidJobError } from "./errors.js";
import { GAP_POLICIES, MAX_COUNT, OVERLAP_POLICIES, ruleParts } from "./recurrence/index.js";
import {
  validateScheduleInput,
  type ScheduleContext,
  type ScheduleInput,
} from "./schedule-input.js";
import {
  DEFAULT_MISFIRE_LIMIT,
  DEFAULT_MISFIRE_TOLERANCE_MS,
  MISFIRE_POLICIES,
  recurrenceOf,
  type MisfirePolicy,
  type Schedule,
  type SeriesDefinitionFields,
  type SeriesRule,
} from "./series.js";
import { parseDueTime, assertTimeZone } from "./time-input.js";
import { isObject, optionalInteger, rejectUnknownFields, requireObject } from "./validate.js";
import { ruleText } from "./recurrence/compile.js";

/**
 * What a caller passes to create a series (`scheduleRecurring`): the template's fields as a
 * job takes them (each occurrence is a job made from them; `key` and `tenant` are the
 * series'), and the series' own.
 */
export interface RecurringInput extends Pick<
  ScheduleInput,
  "target" | "targetOptions" | "payload" | "key" | "tenant" | "maxAttempts" | "expireAfterMs"
> {
  /** A 5- or 6-field cron expression ("0 9 * * 1-5"). Exactly one of `cron` and `rrule`. */
  readonly cron?: string;
  /** An RFC 5545 RRULE ("FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9"). */
  readonly rrule?: string;
  /** IANA zone the rule's wall times are read in. Default: the scheduler's `timeZone`. */
  readonly timeZone?: string;
  /** No occurrence before this (epoch ms, Date or ISO time). Default: now. */
  readonly start?: number | Date | string;
  /** No occurrence after this. Default: none. */
  readonly end?: number | Date | string;
  /** Most occurrences fired, 1 to 100,000. Default: no limit. */
  readonly count?: number;
  /** A nonexistent wall time (spring forward): "shift" (default) or "skip". */
  readonly gap?: "skip" | "shift";
  /** A wall time shown twice (fall back): "first" (default) or "both". */
  readonly overlap?: "first" | "both";
  /** After downtime: "fire-once" (default), "fire-all" or "skip" (docs/recurring.md). */
  readonly misfire?: MisfirePolicy;
  /** `fire-all`: most missed occurrences fired in one catch-up, 1 to 10,000. Default 100. */
  readonly misfireLimit?: number;
  /** `skip`: how late an occurrence still fires, ms. Default 60,000. */
  readonly misfireToleranceMs?: number;
}

const TEMPLATE_FIELDS = [
  "target",
  "targetOptions",
  "payload",
  "key",
  "tenant",
  "maxAttempts",
  "expireAfterMs",
] as const;
const SERIES_FIELDS = [
  "cron",
  "rrule",
  "timeZone",
  "start",
  "end",
  "count",
  "gap",
  "overlap",
  "misfire",
  "misfireLimit",
  "misfireToleranceMs",
] as const;
export const RECURRING_INPUT_FIELDS: readonly string[] = [...SERIES_FIELDS, ...TEMPLATE_FIELDS];
/** What an update may change: all but the series' identity (tenant, key). */
export const RECURRING_PATCH_FIELDS: readonly string[] = RECURRING_INPUT_FIELDS.filter(
  (f) => f !== "tenant" && f !== "key",
);

/** The series' definition as validated: everything of a Schedule but its state. */
export type SeriesDefinition = SeriesDefinitionFields;

/**
 * The one validator of a series, for every surface: the template's fields go through the
 * job validator (same rules, same errors), the rule is compiled (a rule that is not one, or
 * never fires after `now`, is refused naming its field), each other field checked by name.
 */
export function validateRecurringInput(raw: unknown, ctx: ScheduleContext): SeriesDefinition {
  const input = requireObject(raw, "schedule");
  rejectUnknownFields(input, RECURRING_INPUT_FIELDS, "");
  const templateInput: Record<string, unknown> = { delayMs: 0 };
  for (const f of TEMPLATE_FIELDS) if (input[f] !== undefined) templateInput[f] = input[f];
  const job = validateScheduleInput(templateInput, { ...ctx, maxPastMs: null });
  const rule = seriesRule(input);
  const timeZone = input.timeZone ?? ctx.defaultTimeZone ?? "UTC";
  assertTimeZone(timeZone, "timeZone");
  const instant = (field: "start" | "end"): number | null => {
    const v = input[field];
    if (v === undefined || v === null) return null;
    return parseDueTime(v, { now: ctx.now, field, timeZone });
  };
  const def: SeriesDefinition = {
    id: job.id,
    tenant: job.tenant,
    key: job.key,
    rule,
    timeZone,
    gap: oneOf(input.gap, GAP_POLICIES, "gap") ?? "shift",
    overlap: oneOf(input.overlap, OVERLAP_POLICIES, "overlap") ?? "first",
    misfire: oneOf(input.misfire, MISFIRE_POLICIES, "misfire") ?? "fire-once",
    misfireLimit:
      optionalInteger(input.misfireLimit, "misfireLimit", 1, 10_000) ?? DEFAULT_MISFIRE_LIMIT,
    misfireToleranceMs:
      optionalInteger(input.misfireToleranceMs, "misfireToleranceMs", 0, 31 * 86_400_000) ??
      DEFAULT_MISFIRE_TOLERANCE_MS,
    // An RRULE's start is its DTSTART (the wall time of the parts it leaves out, the phase of
    // INTERVAL): kept fixed from creation, so the series does not drift as it advances.
    startAt: instant("start") ?? ("rrule" in rule ? ctx.now : null),
    endAt: instant("end"),
    count: optionalInteger(input.count, "count", 1, MAX_COUNT) ?? null,
    template: {
      target: job.target,
      payload: job.payload,
      targetOptions: job.targetOptions,
      maxAttempts: job.maxAttempts,
      expireAfterMs: job.expireAfterMs,
    },
  };
  if (def.endAt !== null && def.startAt !== null && def.endAt < def.startAt) {
    throw new InvalidJobError("end", "a time at or after start", input.end);
  }
  // compiles (a bad rule is refused naming cron or rrule) and must fire at least once
  const first = recurrenceOf(def).next(Math.max(ctx.now, (def.startAt ?? ctx.now) - 1));
  if (first === null) {
    const { kind, text } = ruleParts(rule);
    throw new InvalidJobError(
      kind,
      `a rule with an occurrence after now${def.endAt === null ? "" : " and before end"}`,
      text,
    );
  }
  return def;
}

/** The fields of a stored series as an input, so an update is validated as a whole. */
export function seriesAsInput(s: Schedule): Record<string, unknown> {
  const t = s.template;
  const rule = ruleParts(s.rule);
  return {
    [rule.kind]: rule.text,
    timeZone: s.timeZone,
    target: t.target,
    targetOptions: t.targetOptions,
    payload: t.payload,
    key: s.key,
    tenant: s.tenant,
    maxAttempts: t.maxAttempts,
    expireAfterMs: t.expireAfterMs,
    ...(s.startAt === null ? {} : { start: s.startAt }),
    ...(s.endAt === null ? {} : { end: s.endAt }),
    ...(s.count === null ? {} : { count: s.count }),
    gap: s.gap,
    overlap: s.overlap,
    misfire: s.misfire,
    misfireLimit: s.misfireLimit,
    misfireToleranceMs: s.misfireToleranceMs,
  };
}

const CLEARABLE = ["start", "end", "count"];

/** A patch merged onto a stored series' input: a rule given replaces the stored one. */
export function mergePatch(s: Schedule, raw: unknown): Record<string, unknown> {
  const patch = requireObject(raw, "changes");
  rejectUnknownFields(patch, RECURRING_PATCH_FIELDS, "");
  const base = seriesAsInput(s);
  if (patch.cron !== undefined || patch.rrule !== undefined) {
    delete base.cron;
    delete base.rrule;
  }
  // null clears start, end or count (absent from the merged input: none)
  const cleared = new Set(
    Object.keys(patch).filter((k) => patch[k] === null && CLEARABLE.includes(k)),
  );
  const merged = Object.entries({ ...base, ...patch }).filter(
    ([k, v]) => v !== undefined && !cleared.has(k),
  );
  return Object.fromEntries(merged);
}

function seriesRule(input: Record<string, unknown>): SeriesRule {
  const given: Record<string, unknown> = {};
  if (input.cron !== undefined) given.cron = input.cron;
  if (input.rrule !== undefined) given.rrule = input.rrule;
  if (!isObject(given) || Object.keys(given).length === 0) {
    throw new InvalidJobError(
      "cron",
      'a cron expression (e.g. "0 9 * * 1-5") or an rrule (e.g. "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9")',
      undefined,
    );
  }
  const r = ruleText(given, "cron");
  return r.kind === "cron" ? { cron: r.text } : { rrule: r.text };
}

function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  field: string,
): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (!(allowed as readonly unknown[]).includes(value)) {
    throw new InvalidJobError(field, `one of ${allowed.map((a) => `"${a}"`).join(", ")}`, value);
  }
  return value as T;
}
