import { Described, InvalidJobError, describeReceived } from "./errors.js";
import { assertLocale, MAX_LOCALE } from "./locales.js";
import {
  assertTimeZone,
  isEpochMs,
  MAX_TIME_ZONE,
  parseDueTime,
  requireInstant,
} from "./time-input.js";
import {
  optionalString,
  prefixText,
  rejectUnknownFields,
  requireInteger,
  type FieldPrefix,
} from "./validate.js";

/** Longest delay `delayMs` (and `expireAfterMs`) may ask for: 100 years, in ms. */
export const MAX_DELAY_MS = 100 * 365 * 86_400_000;

/** The fields that say when a job is due, as schedule and reschedule bodies carry them. */
export const DUE_TIME_FIELDS = ["dueAt", "delayMs", "timeZone", "locale"] as const;

/** The fields that say when a job is due, as schedule and reschedule bodies carry them. */
export interface DueTimeFields {
  readonly dueAt?: unknown;
  readonly delayMs?: unknown;
  readonly timeZone?: unknown;
  readonly locale?: unknown;
}

/**
 * A move's due time as resolveDueTime reads it: a bare time (epoch ms, Date or text, read in
 * the call's `timeZone` and `locale`), or the fields of a reschedule body, nothing else.
 */
export function dueTimeFieldsOf(
  when: unknown,
  opts: { readonly timeZone?: string; readonly locale?: string },
): DueTimeFields {
  if (typeof when === "object" && when !== null && !(when instanceof Date)) {
    rejectUnknownFields(when as Record<string, unknown>, DUE_TIME_FIELDS, "");
    return when;
  }
  return {
    dueAt: when,
    ...(opts.timeZone === undefined ? {} : { timeZone: opts.timeZone }),
    ...(opts.locale === undefined ? {} : { locale: opts.locale }),
  };
}

export interface DueTimeContext {
  readonly now: number;
  /** How far in the past a due time may be (ms), or null for no limit. */
  readonly maxPastMs: number | null;
  /** Zone for wall times and natural language when the input names none. Default UTC. */
  readonly defaultTimeZone?: string;
}

/**
 * `dueAt` (+ `timeZone`) or `delayMs` to an epoch-ms due time: exactly one of the two, the
 * time read by parseDueTime, the result inside the one due-time range (requireInstant) and
 * no further back than `maxPastMs`. Shared by schedule (one and many), the HTTP reschedule and
 * the MCP tools, so each answers the same error for the same input, before anything is written.
 */
export function resolveDueTime(
  input: DueTimeFields,
  ctx: DueTimeContext,
  prefix: FieldPrefix = "",
): number {
  let dueAt: number;
  // Checked whenever given, whatever they are used for: a zone or locale sent with delayMs
  // or epoch ms is still the caller's statement, and answers show the zone.
  // (field names built only when the field is there: this runs on every job of a batch)
  const givenZone = optionalString(input.timeZone, "timeZone", TIME_ZONE_RULE, prefix);
  if (givenZone !== undefined) assertTimeZone(givenZone, `${prefixText(prefix)}timeZone`);
  const locale = optionalString(input.locale, "locale", LOCALE_RULE, prefix);
  if (locale !== undefined) assertLocale(locale, `${prefixText(prefix)}locale`);
  if (input.dueAt !== undefined && input.delayMs !== undefined) {
    throw new InvalidJobError(
      `${prefixText(prefix)}delayMs`,
      "to be absent when dueAt is given",
      input.delayMs,
    );
  }
  if (input.delayMs !== undefined) {
    const delay = requireInteger(input.delayMs, "delayMs", 0, MAX_DELAY_MS, prefix);
    dueAt = requireInstant(ctx.now + delay, `${prefixText(prefix)}delayMs`, input.delayMs);
  } else if (input.dueAt !== undefined) {
    const timeZone = givenZone ?? ctx.defaultTimeZone;
    if (isEpochMs(input.dueAt)) {
      // the bulk path's common case: no options object, no name strings
      dueAt = input.dueAt;
    } else {
      const p = prefixText(prefix);
      dueAt = parseDueTime(input.dueAt, {
        now: ctx.now,
        field: `${p}dueAt`,
        timeZoneField: `${p}timeZone`,
        localeField: `${p}locale`,
        ...(timeZone === undefined ? {} : { timeZone }),
        ...(locale === undefined ? {} : { locale }),
      });
    }
  } else {
    throw new InvalidJobError(`${prefixText(prefix)}dueAt`, "a due time (or delayMs)", undefined);
  }
  if (ctx.maxPastMs !== null && dueAt < ctx.now - ctx.maxPastMs) {
    const iso = new Date(dueAt).toISOString();
    throw new InvalidJobError(
      `${prefixText(prefix)}dueAt`,
      `a time no more than ${ctx.maxPastMs} ms in the past`,
      // a text shows what it was read as: "yesterday" (2026-11-30T09:00:00.000Z)
      typeof input.dueAt === "string"
        ? new Described(`${describeReceived(input.dueAt)} (${iso})`)
        : iso,
    );
  }
  return dueAt;
}

const TIME_ZONE_RULE = { max: MAX_TIME_ZONE } as const;
const LOCALE_RULE = { max: MAX_LOCALE } as const;
