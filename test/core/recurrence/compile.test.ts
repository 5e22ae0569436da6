import { describe, expect, it } from "vitest";
import { InvalidJobError } from "../../../src/core/errors.js";
import { compileRecurrence, type RecurrenceSpec } from "../../../src/core/recurrence/index.js";

function refusal(spec: unknown): InvalidJobError {
  try {
    compileRecurrence(spec as RecurrenceSpec);
  } catch (err) {
    if (err instanceof InvalidJobError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(spec)}`);
}

const start = Date.parse("2026-01-01T00:00:00Z");

describe("rules that never match are refused (a bounded search)", () => {
  it.each([
    [{ cron: "0 0 30 2 *" }, "cron"],
    [{ cron: "0 0 31 4,6,9,11 *" }, "cron"],
    [{ rrule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30" }, "rrule"],
    [{ rrule: "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=31" }, "rrule"],
    [{ rrule: "FREQ=YEARLY;INTERVAL=2;BYMONTH=4;BYMONTHDAY=31" }, "rrule"],
    // every other month from February never reaches January or March: the library's search
    [{ rrule: "FREQ=MONTHLY;INTERVAL=2;BYMONTH=1,3;BYMONTHDAY=1" }, "rrule"],
  ])("%j", (rule, field) => {
    const err = refusal({
      rule,
      timeZone: "Europe/Paris",
      start: Date.parse("2026-02-01T00:00:00Z"),
    });
    expect(err.field).toBe(field);
    expect(err.message).toMatch(/expected a rule that matches at least one date/);
  });

  it("a rare rule is not taken for a never-matching one: Feb 29 on a Monday (2044)", () => {
    const r = compileRecurrence({
      rule: {
        rrule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0",
      },
      timeZone: "UTC",
      start,
    });
    expect(new Date(r.next(start)!.at).toISOString()).toBe("2044-02-29T09:00:00.000Z");
  });
});

describe("bad input names the field, the expected form and what came", () => {
  it.each([
    [{ rule: { cron: "0 9 * *" }, timeZone: "UTC" }, "cron", /5 fields/],
    [{ rule: { cron: "0 25 * * *" }, timeZone: "UTC" }, "cron", /hour/],
    [{ rule: { cron: "0 9 * * MONDAY" }, timeZone: "UTC" }, "cron", /expected a cron expression/],
    [{ rule: { rrule: "FREQ=DAILY;BYHOUR=24" }, timeZone: "UTC" }, "rrule", /BYHOUR values/],
    [{ rule: { rrule: "FREQ=FORTNIGHTLY" }, timeZone: "UTC" }, "rrule", /FREQ is one of/],
    [{ rule: { rrule: "FREQ=DAILY;BYDAY=XX" }, timeZone: "UTC" }, "rrule", /BYDAY entries/],
    [{ rule: { rrule: "FREQ=DAILY;FOO=1" }, timeZone: "UTC" }, "rrule", /unknown part "FOO"/],
    [{ rule: { rrule: "FREQ=DAILY;COUNT=2;UNTIL=20260101" }, timeZone: "UTC" }, "rrule", /both/],
    [
      { rule: { rrule: "FREQ=DAILY\nDTSTART:20260101T090000" }, timeZone: "UTC" },
      "rrule",
      /one RRULE line/,
    ],
    [{ rule: { cron: "0 9 * * *", rrule: "FREQ=DAILY" }, timeZone: "UTC" }, "rule", /not both/],
    [{ rule: {}, timeZone: "UTC" }, "rule", /cron .* or rrule/],
    [{ rule: { cron: "x".repeat(501) }, timeZone: "UTC" }, "cron", /1 to 500 characters/],
    [{ rule: { cron: "0 9 * * *" }, timeZone: "Mars/Olympus" }, "timeZone", /IANA time zone/],
    [{ rule: { cron: "0 9 * * *" }, timeZone: "UTC", gap: "forward" }, "gap", /"shift", "skip"/],
    [
      { rule: { cron: "0 9 * * *" }, timeZone: "UTC", overlap: "last" },
      "overlap",
      /"first", "both"/,
    ],
    [{ rule: { cron: "0 9 * * *" }, timeZone: "UTC", count: 3 }, "start", /count/],
    [{ rule: { cron: "0 9 * * *" }, timeZone: "UTC", start, count: 0 }, "count", /integer from 1/],
    [
      { rule: { cron: "0 9 * * *" }, timeZone: "UTC", start, end: start - 1 },
      "end",
      /at or after start/,
    ],
    [
      { rule: { cron: "0 9 * * *" }, timeZone: "UTC", start: "today" },
      "start",
      /epoch milliseconds/,
    ],
    // RFC 5545 takes these from DTSTART: without a start they are refused, not guessed
    [{ rule: { rrule: "FREQ=WEEKLY;BYHOUR=9" }, timeZone: "UTC" }, "start", /weekday .* BYDAY/],
    [{ rule: { rrule: "FREQ=DAILY;INTERVAL=2" }, timeZone: "UTC" }, "start", /INTERVAL/],
  ])("%j -> %s", (spec, field, message) => {
    const err = refusal(spec);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
    expect(err.message).toContain(`${field}: expected`);
  });
});

describe("compiled rules", () => {
  it("are shared by equal specs and frozen", () => {
    const a = compileRecurrence({ rule: { cron: "0 9 * * 1-5" }, timeZone: "Europe/Paris" });
    const b = compileRecurrence({ rule: { cron: "0 9 * * 1-5" }, timeZone: "Europe/Paris" });
    expect(a).toBe(b);
    expect(Object.isFrozen(a.spec)).toBe(true);
    expect(a.spec).toEqual({
      rule: { cron: "0 9 * * 1-5" },
      timeZone: "Europe/Paris",
      gap: "shift",
      overlap: "first",
    });
    const skip = compileRecurrence({
      rule: { cron: "0 9 * * 1-5" },
      timeZone: "Europe/Paris",
      gap: "skip",
    });
    expect(skip).not.toBe(a);
  });

  it("a spec a cached one resembles is still checked: both rules, a start as text, a policy 'undefined'", () => {
    const cron = { cron: "0 9 * * *" };
    compileRecurrence({ rule: cron, timeZone: "UTC", start, gap: "shift" });
    expect(refusal({ rule: { ...cron, rrule: "FREQ=DAILY" }, timeZone: "UTC" }).field).toBe("rule");
    expect(refusal({ rule: cron, timeZone: "UTC", start: String(start) }).field).toBe("start");
    expect(refusal({ rule: cron, timeZone: "UTC", gap: "undefined" }).field).toBe("gap");
  });

  it("next() asked twice from one instant answers the same, and other instants afresh", () => {
    const r = compileRecurrence({ rule: { cron: "0 9 * * *" }, timeZone: "Europe/Paris" });
    const first = r.next(start);
    expect(r.next(start)).toEqual(first);
    expect(new Date(first!.at).toISOString()).toBe("2026-01-01T08:00:00.000Z");
    expect(new Date(r.next(first!.at)!.at).toISOString()).toBe("2026-01-02T08:00:00.000Z");
    expect(r.next(start)).toEqual(first);
    expect(() => r.next(Number.NaN)).toThrow(InvalidJobError);
    expect(() => r.next(Number.NaN)).toThrow(InvalidJobError);
  });

  it("an RRULE without a start reads its missing time parts as 00:00:00", () => {
    const r = compileRecurrence({ rule: { rrule: "RRULE:FREQ=DAILY" }, timeZone: "UTC" });
    expect(new Date(r.next(start)!.at).toISOString()).toBe("2026-01-02T00:00:00.000Z");
  });

  it("preview caps its count at 100", () => {
    const r = compileRecurrence({ rule: { cron: "* * * * *" }, timeZone: "UTC" });
    expect(r.preview(start, 1000)).toHaveLength(100);
    expect(r.preview(start, 0)).toEqual([]);
  });
});
