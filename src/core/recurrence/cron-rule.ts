import { createRequire } from "node:module";
import type * as CronerModule from "croner";
import { InvalidJobError } from "../errors.js";
import { FieldSequence, type FieldSpec, type WallSequence } from "./wall-sequence.js";

/**
 * Cron expressions, read by croner (11): 5 fields (minute hour day-of-month month
 * day-of-week) or 6 (seconds first), names (MON, JAN), ranges, lists, steps, `?`, `L`
 * (last day of month; FRIL, the last Friday), `W`, `#` (FRI#2) and the @daily family.
 * croner parses; an expression that comes to a set of values per field (nearly all do) is
 * enumerated by FieldSequence, the rest (W, #, last weekday) by croner itself in a fixed
 * UTC offset of 0, which is floating time. Day of month and day of week both restricted
 * match either (cron's OR), unless the weekday field starts with `+` (croner's AND).
 */

const CRON_TEXT =
  'a cron expression of 5 fields (minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5") or 6 (seconds first)';

// croner's CommonJS build, loaded on the first cron rule only (CLI start-up stays as it is)
const requireModule = createRequire(import.meta.url);
let croner: typeof CronerModule | undefined;
function loadCroner(): typeof CronerModule {
  croner ??= requireModule("croner") as typeof CronerModule;
  return croner;
}

/** croner's marker for "any occurrence of this weekday in the month" (no `#n`, no `L`). */
const ANY_OCCURRENCE = 63;

export interface CompiledCron {
  readonly sequence: WallSequence;
  /** The field sets, when the expression is one (describeRecurrence reads them). */
  readonly fields: FieldSpec | null;
}

/** Reads `expression` or throws InvalidJobError naming `field` with croner's reason. */
export function compileCron(expression: string, field = "cron"): CompiledCron {
  const { CronPattern, Cron } = loadCroner();
  const options = { mode: "5-or-6-parts" as const };
  let pattern: CronerModule.CronPattern;
  try {
    pattern = new CronPattern(expression, undefined, options);
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/^CronPattern: /, "") : "";
    throw new InvalidJobError(field, `${CRON_TEXT} (${reason})`, expression);
  }
  const fields = fieldsOf(pattern);
  if (fields !== null) return { sequence: new FieldSequence(fields), fields };
  const cron = new Cron(expression, { ...options, utcOffset: 0 });
  return {
    fields: null,
    sequence: {
      after(floating: number): number | null {
        const next = cron.nextRun(new Date(floating));
        return next === null ? null : next.getTime();
      },
    },
  };
}

function indexes(flagsOf: readonly number[], offset = 0): number[] {
  const out: number[] = [];
  flagsOf.forEach((v, i) => {
    if (v !== 0) out.push(i + offset);
  });
  return out;
}

/** The expression as field sets, or null when it uses W, #, or a last weekday. */
function fieldsOf(p: CronerModule.CronPattern): FieldSpec | null {
  if (p.lastWeekday || p.nearestWeekdays.some((v) => v !== 0)) return null;
  if (p.dayOfWeek.some((v) => v !== 0 && v !== ANY_OCCURRENCE)) return null;
  return {
    seconds: indexes(p.second),
    minutes: indexes(p.minute),
    hours: indexes(p.hour),
    monthDays: indexes(p.day, 1),
    lastDayOfMonth: p.lastDayOfMonth,
    months: indexes(p.month, 1),
    weekdays: indexes(p.dayOfWeek.slice(0, 7)),
    dayLogic: p.useAndLogic ? "and" : "or",
    monthDaysRestricted: !p.starDOM,
    weekdaysRestricted: !p.starDOW,
  };
}
