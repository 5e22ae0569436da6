/**
 * The recurrence rule of a series: a 5- or 6-field cron expression (seconds first when there
 * are six) or an RFC 5545 RRULE value (`FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9`, with or without
 * the `RRULE:` prefix). Both are read in the series' time zone (docs/recurring.md).
 */
export type RecurrenceRule = { readonly cron: string } | { readonly rrule: string };

/** Which form a rule has and its text: the one place that tells the two forms apart. */
export function ruleParts(rule: RecurrenceRule): { kind: "cron" | "rrule"; text: string } {
  return "cron" in rule ? { kind: "cron", text: rule.cron } : { kind: "rrule", text: rule.rrule };
}

/** The rule of a stored form and text (the inverse of ruleParts). */
export function ruleFromParts(kind: "cron" | "rrule", text: string): RecurrenceRule {
  return kind === "cron" ? { cron: text } : { rrule: text };
}

/**
 * A wall time the clocks skip (spring forward): `shift` (default) fires it moved forward by
 * the gap's length (02:30 on a night that jumps 02:00 -> 03:00 fires at 03:30), as RFC 5545
 * reads a nonexistent time; `skip` fires nothing for it.
 */
export type GapPolicy = "shift" | "skip";

/**
 * A wall time the clocks show twice (fall back): `first` (default) fires on its first
 * occurrence only; `both` fires on each.
 */
export type OverlapPolicy = "first" | "both";

export const GAP_POLICIES: readonly GapPolicy[] = ["shift", "skip"];
export const OVERLAP_POLICIES: readonly OverlapPolicy[] = ["first", "both"];

/** What compileRecurrence takes. */
export interface RecurrenceSpec {
  readonly rule: RecurrenceRule;
  /** IANA time zone the rule's wall times are read in ("Europe/Paris"). */
  readonly timeZone: string;
  /**
   * First instant an occurrence may have (epoch ms, inclusive). For an RRULE it is DTSTART:
   * its wall time gives the parts the rule leaves out (FREQ=DAILY with a start at 09:00
   * fires at 09:00) and the phase of INTERVAL. Optional; see docs/recurring.md for a rule
   * that needs it.
   */
  readonly start?: number;
  /** Last instant an occurrence may have (epoch ms, inclusive). Optional. */
  readonly end?: number;
  /** Occurrences in all, counted from `start` (which it needs). Optional, 1 to MAX_COUNT. */
  readonly count?: number;
  /** Default "shift". */
  readonly gap?: GapPolicy;
  /** Default "first". */
  readonly overlap?: OverlapPolicy;
}

/**
 * How an occurrence's wall time became its instant: `exact` (the clocks show it once),
 * `gap-shifted` (the clocks skip it; moved forward by the gap), `overlap-first` and
 * `overlap-second` (the clocks show it twice; the earlier and the later instant).
 */
export type OccurrenceMapping = "exact" | "gap-shifted" | "overlap-first" | "overlap-second";

export interface Occurrence {
  /** When it fires, epoch ms. */
  readonly at: number;
  /**
   * The wall time the rule named, ISO 8601 without offset ("2026-03-29T02:30:00"); for a
   * gap-shifted occurrence it is the nonexistent time, not `at`'s reading.
   */
  readonly nominal: string;
  /**
   * Unique among a series' occurrences, the key a stored occurrence is written under:
   * `nominal`, or `nominal` + "#2" for the second instant of a wall time the clocks show
   * twice (overlap "both").
   */
  readonly key: string;
  readonly mapping: OccurrenceMapping;
}

/** A compiled rule: pure, immutable, shared by every caller asking for the same spec. */
export interface Recurrence {
  /** The spec it was compiled from, with defaults filled in. */
  readonly spec: Readonly<Required<Pick<RecurrenceSpec, "rule" | "timeZone" | "gap" | "overlap">>> &
    Pick<RecurrenceSpec, "start" | "end" | "count">;
  /** The first occurrence strictly after `afterMs`, or null when the series has ended. */
  next(afterMs: number): Occurrence | null;
  /** The next `count` occurrences strictly after `fromMs`, in order (count capped at MAX_PREVIEW). */
  preview(fromMs: number, count: number): Occurrence[];
}

/** Most occurrences one preview returns. */
export const MAX_PREVIEW = 100;
/** Largest `count` a series may have. */
export const MAX_COUNT = 100_000;
/** Longest rule text accepted (cron or RRULE). */
export const MAX_RULE_TEXT = 500;
