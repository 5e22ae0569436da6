import { describe, expect, it } from "vitest";
import { InvalidJobError } from "../../../src/core/errors.js";
import { readRecurrence, recurrenceForm } from "../../../src/core/recurrence/index.js";

/** The one text field that takes any rule: which reader a text goes to follows from its form. */
describe("readRecurrence", () => {
  it("tells cron, RRULE and English apart by their form", () => {
    for (const cron of [
      "0 9 * * 1-5",
      "*/15 * * * *",
      "0 0 L * *",
      "30 17 * * MON-FRI",
      "0 9 * JAN,JUL FRI#2",
      "0 0 12 * * ?",
      "@daily",
    ]) {
      expect(recurrenceForm(cron), cron).toBe("cron");
    }
    for (const rrule of ["FREQ=DAILY;BYHOUR=9", "RRULE:FREQ=WEEKLY;BYDAY=MO", "freq=daily"]) {
      expect(recurrenceForm(rrule), rrule).toBe("rrule");
    }
    for (const english of [
      "every weekday at 9am",
      "every 2 weeks on monday at 17:30",
      "every monday and friday at 9",
      "every day at 8",
      "every 15 minutes",
      "the last day of each month at 18:00",
    ]) {
      expect(recurrenceForm(english), english).toBe("english");
    }
  });

  it("reads each form into its rule, English in the given zone", () => {
    expect(readRecurrence(" 0 9 * * 1-5 ", { timeZone: "UTC" })).toEqual({ cron: "0 9 * * 1-5" });
    expect(readRecurrence("FREQ=DAILY;BYHOUR=9", { timeZone: "UTC" })).toEqual({
      rrule: "FREQ=DAILY;BYHOUR=9",
    });
    expect(readRecurrence("every weekday at 9am", { timeZone: "Europe/Paris" })).toEqual({
      rrule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0",
    });
  });

  it("refuses what is no rule naming the field, never guessing", () => {
    const refused = (text: unknown): InvalidJobError => {
      try {
        readRecurrence(text, { timeZone: "UTC", field: "recurrence" });
      } catch (err) {
        if (err instanceof InvalidJobError) return err;
        throw err;
      }
      throw new Error(`${String(text)} was read`);
    };
    for (const text of ["", "   ", 42, "x".repeat(501), "whenever", "every other blue moon"]) {
      const err = refused(text);
      expect(err.field).toBe("recurrence");
      expect(err.expected).toMatch(/every weekday at 9am/);
    }
  });
});
