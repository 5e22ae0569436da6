import { describe, expect, it } from "vitest";
import { InvalidJobError } from "../../../src/core/errors.js";
import {
  compileRecurrence,
  describeRecurrence,
  parseRecurrenceText,
} from "../../../src/core/recurrence/index.js";

const tz = { timeZone: "Europe/Paris" };
const DAYS = "BYHOUR=9;BYMINUTE=0;BYSECOND=0";

describe("parseRecurrenceText: English to RRULE", () => {
  it.each([
    ["every weekday at 9am", `FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;${DAYS}`],
    ["Every weekday at 9 AM.", `FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;${DAYS}`],
    ["weekdays at 09:00", `FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;${DAYS}`],
    [
      "every 2 weeks on monday at 17:30",
      "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;BYHOUR=17;BYMINUTE=30;BYSECOND=0",
    ],
    ["every day at 8", "FREQ=DAILY;BYHOUR=8;BYMINUTE=0;BYSECOND=0"],
    ["daily at 7:15pm", "FREQ=DAILY;BYHOUR=19;BYMINUTE=15;BYSECOND=0"],
    ["every day at 9am and 5pm", "FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0;BYSECOND=0"],
    ["every day at noon", "FREQ=DAILY;BYHOUR=12;BYMINUTE=0;BYSECOND=0"],
    ["every day at midnight", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0;BYSECOND=0"],
    ["every day at 12am", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0;BYSECOND=0"],
    ["every 3 days at 10:00", "FREQ=DAILY;INTERVAL=3;BYHOUR=10;BYMINUTE=0;BYSECOND=0"],
    [
      "the last day of each month at 18:00",
      "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=18;BYMINUTE=0;BYSECOND=0",
    ],
    ["on the 15th of every month at 9am", `FREQ=MONTHLY;BYMONTHDAY=15;${DAYS}`],
    ["every month on the 1st at 9am", `FREQ=MONTHLY;BYMONTHDAY=1;${DAYS}`],
    [
      "the first monday of each month at 9:30",
      "FREQ=MONTHLY;BYDAY=1MO;BYHOUR=9;BYMINUTE=30;BYSECOND=0",
    ],
    [
      "the last friday of the month at 4pm",
      "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=16;BYMINUTE=0;BYSECOND=0",
    ],
    ["every monday and wednesday at 9am", `FREQ=WEEKLY;BYDAY=MO,WE;${DAYS}`],
    ["every mon, wed and fri at 9am", `FREQ=WEEKLY;BYDAY=MO,WE,FR;${DAYS}`],
    ["on tuesdays at 9am", `FREQ=WEEKLY;BYDAY=TU;${DAYS}`],
    ["weekly on thursday at 9am", `FREQ=WEEKLY;BYDAY=TH;${DAYS}`],
    ["every weekend at 10am", "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=10;BYMINUTE=0;BYSECOND=0"],
    ["every year on march 3 at 9am", `FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=3;${DAYS}`],
    ["every february 29th at 9am", `FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;${DAYS}`],
    ["every hour", "FREQ=HOURLY;BYMINUTE=0;BYSECOND=0"],
    ["hourly", "FREQ=HOURLY;BYMINUTE=0;BYSECOND=0"],
    ["every 15 minutes", "FREQ=HOURLY;BYMINUTE=0,15,30,45;BYSECOND=0"],
    ["every 7 minutes", "FREQ=MINUTELY;INTERVAL=7;BYSECOND=0"],
    ["every 6 hours", "FREQ=DAILY;BYHOUR=0,6,12,18;BYMINUTE=0;BYSECOND=0"],
    ["every minute", "FREQ=MINUTELY;BYSECOND=0"],
  ])("%s -> %s", (text, rrule) => {
    const rule = parseRecurrenceText(text, tz);
    expect(rule).toEqual({ rrule });
    // and it compiles (INTERVAL counts from a start, which the series has)
    expect(() => compileRecurrence({ rule, ...tz, start: Date.UTC(2026, 0, 1) })).not.toThrow();
  });

  it.each([
    ["every second tuesday", /English recurrence such as "every weekday at 9am"/],
    ["every weekday", /say the time, e.g. 'at 9am'/],
    ["every day at 25:00", /times read like 9am/],
    ["every day at 13pm", /times read like 9am/],
    ["every day at 9:00 and 17:30", /share their minutes/],
    ["every hour at 9am", /take no time of day/],
    ["the 32nd of each month at 9am", /does not exist/],
    ["every february 30 at 9am", /does not exist/],
    ["tomorrow at 9am", /English recurrence/],
    ["every blue moon", /English recurrence/],
    ["", /English recurrence/],
    ["every day at 9am ".repeat(20), /English recurrence/],
  ])("refuses %j naming the field, with examples that work", (text, message) => {
    let err: unknown;
    try {
      parseRecurrenceText(text, tz);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidJobError);
    expect((err as InvalidJobError).field).toBe("recurrence");
    expect((err as InvalidJobError).message).toMatch(message);
    expect((err as InvalidJobError).message).toContain('"every 2 weeks on monday at 17:30"');
  });

  it("names the caller's field and checks the zone", () => {
    expect(() =>
      parseRecurrenceText("every blue moon", { ...tz, field: "task.recurrence" }),
    ).toThrow(/^task\.recurrence: expected/);
    expect(() => parseRecurrenceText("every day at 9am", { timeZone: "Nowhere/Else" })).toThrow(
      /^timeZone:/,
    );
  });
});

describe("describeRecurrence: a rule in English", () => {
  it.each([
    [{ cron: "0 9 * * 1-5" }, "every weekday at 09:00 (Europe/Paris)"],
    [{ cron: "30 17 * * 1" }, "every Monday at 17:30 (Europe/Paris)"],
    [{ cron: "0 9,17 * * *" }, "every day at 09:00 and 17:00 (Europe/Paris)"],
    [{ cron: "0 18 L * *" }, "the last day of each month at 18:00 (Europe/Paris)"],
    [{ cron: "0 9 1,15 * *" }, "the 1st and the 15th of each month at 09:00 (Europe/Paris)"],
    [{ cron: "0 9 1 * 1" }, "the 1st of each month and every Monday at 09:00 (Europe/Paris)"],
    [{ cron: "0 12 29 2 *" }, "the 29th in February at 12:00 (Europe/Paris)"],
    [{ cron: "*/15 * * * *" }, "every 15 minutes (Europe/Paris)"],
    [{ cron: "0 * * * *" }, "every hour (Europe/Paris)"],
    [{ cron: "0 * * * 1-5" }, "every hour, on every weekday (Europe/Paris)"],
    [{ cron: "30 0 9 * * *" }, "every day at 09:00:30 (Europe/Paris)"],
    [{ cron: "0 9 * * FRI#2" }, 'cron "0 9 * * FRI#2" (Europe/Paris)'],
    [
      { rrule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9" },
      "every weekday at 09:00 (Europe/Paris)",
    ],
    [
      { rrule: "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=18" },
      "the last day of each month at 18:00 (Europe/Paris)",
    ],
    [
      { rrule: "FREQ=MONTHLY;BYDAY=1MO;BYHOUR=9;BYMINUTE=30" },
      "the 1st Monday of each month at 09:30 (Europe/Paris)",
    ],
    [
      { rrule: "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=16" },
      "the last Friday of each month at 16:00 (Europe/Paris)",
    ],
    [{ rrule: "FREQ=DAILY;BYHOUR=9;COUNT=5" }, "every day at 09:00, 5 times (Europe/Paris)"],
    [
      { rrule: "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1" },
      "RRULE FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1 (Europe/Paris)",
    ],
  ])("%j -> %s", (rule, text) => {
    expect(describeRecurrence(rule, "Europe/Paris", Date.UTC(2026, 0, 1))).toBe(text);
  });

  it("every 2 weeks on Monday at 17:30, with the series' start", () => {
    const rule = { rrule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;BYHOUR=17;BYMINUTE=30;BYSECOND=0" };
    expect(describeRecurrence(rule, "Europe/Paris", Date.UTC(2026, 0, 1))).toBe(
      "every 2 weeks on Monday at 17:30 (Europe/Paris)",
    );
    // FREQ=DAILY takes its time of day from the start: 08:00Z is 09:00 in Paris
    expect(
      describeRecurrence({ rrule: "FREQ=DAILY" }, "Europe/Paris", Date.UTC(2026, 0, 1, 8)),
    ).toBe("every day at 09:00 (Europe/Paris)");
  });

  it("what describeRecurrence writes for a parsed phrase reads back as the same rule", () => {
    for (const phrase of [
      "every weekday at 9am",
      "every day at 9am and 5pm",
      "the last day of each month at 18:00",
      "every monday and wednesday at 9am",
      "every 15 minutes",
      "every hour",
      "every 2 weeks on monday at 17:30",
      "the first monday of each month at 9:30",
    ]) {
      const rule = parseRecurrenceText(phrase, tz);
      const words = describeRecurrence(rule, "Europe/Paris", Date.UTC(2026, 0, 1)).replace(
        " (Europe/Paris)",
        "",
      );
      expect(parseRecurrenceText(words, tz), `${phrase} -> ${words}`).toEqual(rule);
    }
  });
});
