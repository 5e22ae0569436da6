import { InvalidJobError } from "../errors.js";
import { parseRecurrenceText } from "./parse-text.js";
import { MAX_RULE_TEXT, type RecurrenceRule } from "./types.js";

/**
 * One text field that holds any rule a person or a model writes: an RRULE
 * ("FREQ=WEEKLY;BYDAY=MO;BYHOUR=9"), a cron expression ("0 9 * * 1-5", "@daily") or English
 * ("every weekday at 9am"). Which one it is follows from the text's form alone, never from
 * trying each reader until one accepts it: a cron expression that does not compile must be
 * refused as cron, not read again as English into some other rule.
 */

/** Examples of each form, shown when a text cannot be read (every one of them works). */
export const RECURRENCE_FORMS =
  '"every weekday at 9am" (English), "0 9 * * 1-5" (cron) or "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0" (RRULE)';

const RRULE_FORM = /^(?:RRULE:)?FREQ=/i;
const CRON_MACRO = /^@[a-z]+$/i;
/** A cron field: digits and cron's symbols (`*`, `/`, `,`, `-`, `?`, `L`, `W`, `#`, `+`). */
const CRON_SYMBOLS = /^[\d*/,?#+LW-]+$/i;
const CRON_NAMES = /jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat/gi;

/**
 * A cron field: symbols, or names among them ("MON-FRI", "JAN,JUL", "FRI#2", "FRIL"). An
 * English word leaves letters that are no symbol once the names are taken out ("monday").
 */
function isCronField(field: string): boolean {
  if (CRON_SYMBOLS.test(field)) return true;
  const rest = field.replace(CRON_NAMES, "");
  return rest !== field && (rest === "" || CRON_SYMBOLS.test(rest));
}

export type RecurrenceForm = "rrule" | "cron" | "english";

/** Which reader `text` is for, by its form. */
export function recurrenceForm(text: string): RecurrenceForm {
  const t = text.trim();
  if (RRULE_FORM.test(t)) return "rrule";
  if (CRON_MACRO.test(t)) return "cron";
  const fields = t.split(/\s+/);
  if ((fields.length === 5 || fields.length === 6) && fields.every(isCronField)) return "cron";
  return "english";
}

/**
 * `text` as a rule: an RRULE or cron expression as written (compiled, and refused naming
 * `field`, where the series is validated), English read by parseRecurrenceText in
 * `timeZone` (refused here naming `field`, with examples that work).
 */
export function readRecurrence(
  text: unknown,
  options: { readonly timeZone: string; readonly field?: string },
): RecurrenceRule {
  const field = options.field ?? "recurrence";
  if (typeof text !== "string" || text.trim() === "" || text.length > MAX_RULE_TEXT) {
    throw new InvalidJobError(
      field,
      `a rule of 1 to ${MAX_RULE_TEXT} characters such as ${RECURRENCE_FORMS}`,
      text,
    );
  }
  switch (recurrenceForm(text)) {
    case "rrule":
      return { rrule: text.trim() };
    case "cron":
      return { cron: text.trim() };
    case "english":
      return parseRecurrenceText(text, { timeZone: options.timeZone, field });
  }
}
