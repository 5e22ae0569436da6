/**
 * Recurrence rules (issue 12 §1): cron and RRULE read in an IANA zone, with the DST rules of
 * docs/recurring.md. Pure: no clock, no store; the series engine builds on it.
 */
export { compileRecurrence } from "./compile.js";
export {
  GAP_POLICIES,
  MAX_COUNT,
  MAX_PREVIEW,
  MAX_RULE_TEXT,
  OVERLAP_POLICIES,
  type GapPolicy,
  type Occurrence,
  type OccurrenceMapping,
  type OverlapPolicy,
  type Recurrence,
  type RecurrenceRule,
  type RecurrenceSpec,
  ruleFromParts,
  ruleParts,
} from "./types.js";
export { describeRecurrence } from "./describe.js";
export {
  MAX_RECURRENCE_TEXT,
  RECURRENCE_TEXT_EXAMPLES,
  parseRecurrenceText,
} from "./parse-text.js";
export {
  RECURRENCE_FORMS,
  readRecurrence,
  recurrenceForm,
  type RecurrenceForm,
} from "./recurrence-text.js";
