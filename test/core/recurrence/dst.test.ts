import { describe, expect, it } from "vitest";
import {
  compileRecurrence,
  type RecurrenceRule,
  type RecurrenceSpec,
} from "../../../src/core/recurrence/index.js";

// Every expected instant here is written out by hand from the zone's IANA rules (tzdata), not
// computed by the code under test or by the libraries it uses:
//  - Europe/Paris: CET +01, CEST +02; changes at 01:00 UTC on the last Sunday of March
//    (02:00 -> 03:00) and of October (03:00 -> 02:00): 2026-03-29 and 2026-10-25.
//  - America/New_York: EST -05, EDT -04; 02:00 on the second Sunday of March (-> 03:00,
//    07:00Z) and on the first Sunday of November (-> 01:00, 06:00Z): 2026-03-08, 2026-11-01.
//  - Australia/Lord_Howe: +10:30, +11 in summer, a 30-minute change: 02:00 -> 02:30 on the
//    first Sunday of October (2026-10-04, 15:30Z the day before), 02:00 -> 01:30 on the first
//    Sunday of April (2026-04-05, 15:00Z the day before).
//  - Asia/Kathmandu: +05:45 all year.
//  - America/Sao_Paulo: -03 since Brazil abolished DST in 2019; its last spring change was
//    2018-11-04, 00:00 -03 -> 01:00 -02 (03:00Z).
const utc = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

function firing(spec: Partial<RecurrenceSpec> & { rule: RecurrenceRule }, from: string, n: number) {
  const r = compileRecurrence({ timeZone: "UTC", ...spec });
  return r.preview(utc(from), n).map((o) => `${iso(o.at)} ${o.key} ${o.mapping}`);
}

describe("Europe/Paris", () => {
  const zone = { timeZone: "Europe/Paris" };
  it("keeps 09:00 local across both changes", () => {
    expect(firing({ ...zone, rule: { cron: "0 9 * * *" } }, "2026-03-28T00:00:00Z", 2)).toEqual([
      "2026-03-28T08:00:00Z 2026-03-28T09:00:00 exact",
      "2026-03-29T07:00:00Z 2026-03-29T09:00:00 exact",
    ]);
    expect(firing({ ...zone, rule: { cron: "0 9 * * *" } }, "2026-10-24T00:00:00Z", 2)).toEqual([
      "2026-10-24T07:00:00Z 2026-10-24T09:00:00 exact",
      "2026-10-25T08:00:00Z 2026-10-25T09:00:00 exact",
    ]);
  });

  it("gap, shift (default): 02:30 on 2026-03-29 fires at 03:30 CEST", () => {
    expect(firing({ ...zone, rule: { cron: "30 2 * * *" } }, "2026-03-28T00:00:00Z", 3)).toEqual([
      "2026-03-28T01:30:00Z 2026-03-28T02:30:00 exact",
      "2026-03-29T01:30:00Z 2026-03-29T02:30:00 gap-shifted",
      "2026-03-30T00:30:00Z 2026-03-30T02:30:00 exact",
    ]);
  });

  it("gap, skip: 02:30 on 2026-03-29 does not fire", () => {
    const spec = { ...zone, rule: { cron: "30 2 * * *" }, gap: "skip" as const };
    expect(firing(spec, "2026-03-28T00:00:00Z", 2)).toEqual([
      "2026-03-28T01:30:00Z 2026-03-28T02:30:00 exact",
      "2026-03-30T00:30:00Z 2026-03-30T02:30:00 exact",
    ]);
  });

  it("gap, shift: a shifted time landing on another occurrence fires once, in order", () => {
    // 02:00, 02:20, 02:40 move to 03:00, 03:20, 03:40 CEST: the instants of the 03:xx ones
    const spec = { ...zone, rule: { cron: "*/20 2,3 * * *" } };
    expect(firing(spec, "2026-03-29T00:00:00Z", 4)).toEqual([
      "2026-03-29T01:00:00Z 2026-03-29T02:00:00 gap-shifted",
      "2026-03-29T01:20:00Z 2026-03-29T02:20:00 gap-shifted",
      "2026-03-29T01:40:00Z 2026-03-29T02:40:00 gap-shifted",
      "2026-03-30T00:00:00Z 2026-03-30T02:00:00 exact",
    ]);
  });

  it("overlap, first (default): 02:30 on 2026-10-25 fires once, at 02:30 CEST", () => {
    expect(firing({ ...zone, rule: { cron: "30 2 * * *" } }, "2026-10-24T00:00:00Z", 3)).toEqual([
      "2026-10-24T00:30:00Z 2026-10-24T02:30:00 exact",
      "2026-10-25T00:30:00Z 2026-10-25T02:30:00 overlap-first",
      "2026-10-26T01:30:00Z 2026-10-26T02:30:00 exact",
    ]);
  });

  it("overlap, both: 02:30 on 2026-10-25 fires at 02:30 CEST and 02:30 CET, keyed apart", () => {
    const spec = { ...zone, rule: { cron: "30 2 * * *" }, overlap: "both" as const };
    expect(firing(spec, "2026-10-24T12:00:00Z", 3)).toEqual([
      "2026-10-25T00:30:00Z 2026-10-25T02:30:00 overlap-first",
      "2026-10-25T01:30:00Z 2026-10-25T02:30:00#2 overlap-second",
      "2026-10-26T01:30:00Z 2026-10-26T02:30:00 exact",
    ]);
  });

  it("overlap, both: the repeated hour comes in instant order, not wall order", () => {
    const spec = { ...zone, rule: { cron: "0,30 2 * * *" }, overlap: "both" as const };
    expect(firing(spec, "2026-10-24T12:00:00Z", 4)).toEqual([
      "2026-10-25T00:00:00Z 2026-10-25T02:00:00 overlap-first",
      "2026-10-25T00:30:00Z 2026-10-25T02:30:00 overlap-first",
      "2026-10-25T01:00:00Z 2026-10-25T02:00:00#2 overlap-second",
      "2026-10-25T01:30:00Z 2026-10-25T02:30:00#2 overlap-second",
    ]);
  });

  it("overlap, first, asked from inside the second pass: the next day's", () => {
    // 01:15Z is 02:15 CET, the repeat; 02:30's first instant (00:30Z) is already past
    const r = compileRecurrence({ ...zone, rule: { cron: "30 2 * * *" } });
    expect(iso(r.next(utc("2026-10-25T01:15:00Z"))!.at)).toBe("2026-10-26T01:30:00Z");
  });

  it("gap, shift, asked from just after the gap: the shifted time still comes", () => {
    // 01:10Z is 03:10 CEST; 02:30 CET does not exist and fires at 03:30 CEST (01:30Z)
    const r = compileRecurrence({ ...zone, rule: { cron: "30 2 * * *" } });
    expect(iso(r.next(utc("2026-03-29T01:10:00Z"))!.at)).toBe("2026-03-29T01:30:00Z");
  });

  it("the same through an RRULE", () => {
    const rule = { rrule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;BYSECOND=0" };
    expect(firing({ ...zone, rule, overlap: "both" }, "2026-10-24T12:00:00Z", 2)).toEqual([
      "2026-10-25T00:30:00Z 2026-10-25T02:30:00 overlap-first",
      "2026-10-25T01:30:00Z 2026-10-25T02:30:00#2 overlap-second",
    ]);
    expect(firing({ ...zone, rule }, "2026-03-29T00:00:00Z", 1)).toEqual([
      "2026-03-29T01:30:00Z 2026-03-29T02:30:00 gap-shifted",
    ]);
  });
});

describe("America/New_York", () => {
  const zone = { timeZone: "America/New_York" };
  it("gap: 02:30 on 2026-03-08 shifts to 03:30 EDT", () => {
    expect(firing({ ...zone, rule: { cron: "30 2 * * *" } }, "2026-03-07T00:00:00Z", 3)).toEqual([
      "2026-03-07T07:30:00Z 2026-03-07T02:30:00 exact",
      "2026-03-08T07:30:00Z 2026-03-08T02:30:00 gap-shifted",
      "2026-03-09T06:30:00Z 2026-03-09T02:30:00 exact",
    ]);
  });

  it("overlap: 01:30 on 2026-11-01, first and both", () => {
    const rule = { cron: "30 1 * * *" };
    expect(firing({ ...zone, rule }, "2026-10-31T00:00:00Z", 3)).toEqual([
      "2026-10-31T05:30:00Z 2026-10-31T01:30:00 exact",
      "2026-11-01T05:30:00Z 2026-11-01T01:30:00 overlap-first",
      "2026-11-02T06:30:00Z 2026-11-02T01:30:00 exact",
    ]);
    expect(firing({ ...zone, rule, overlap: "both" }, "2026-11-01T00:00:00Z", 2)).toEqual([
      "2026-11-01T05:30:00Z 2026-11-01T01:30:00 overlap-first",
      "2026-11-01T06:30:00Z 2026-11-01T01:30:00#2 overlap-second",
    ]);
  });

  it("weekdays at 09:00 across the spring change", () => {
    const rule = { rrule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0" };
    expect(firing({ ...zone, rule }, "2026-03-06T00:00:00Z", 2)).toEqual([
      "2026-03-06T14:00:00Z 2026-03-06T09:00:00 exact",
      "2026-03-09T13:00:00Z 2026-03-09T09:00:00 exact",
    ]);
  });
});

describe("Australia/Lord_Howe (a 30-minute change)", () => {
  const zone = { timeZone: "Australia/Lord_Howe" };
  it("gap: 02:15 on 2026-10-04 shifts 30 minutes, or is skipped", () => {
    const rule = { cron: "15 2 * * *" };
    expect(firing({ ...zone, rule }, "2026-10-02T00:00:00Z", 3)).toEqual([
      "2026-10-02T15:45:00Z 2026-10-03T02:15:00 exact",
      "2026-10-03T15:45:00Z 2026-10-04T02:15:00 gap-shifted",
      "2026-10-04T15:15:00Z 2026-10-05T02:15:00 exact",
    ]);
    expect(firing({ ...zone, rule, gap: "skip" }, "2026-10-02T00:00:00Z", 2)).toEqual([
      "2026-10-02T15:45:00Z 2026-10-03T02:15:00 exact",
      "2026-10-04T15:15:00Z 2026-10-05T02:15:00 exact",
    ]);
  });

  it("overlap: 01:45 on 2026-04-05 is shown twice, 30 minutes apart", () => {
    const rule = { cron: "45 1 * * *" };
    expect(firing({ ...zone, rule }, "2026-04-03T00:00:00Z", 3)).toEqual([
      "2026-04-03T14:45:00Z 2026-04-04T01:45:00 exact",
      "2026-04-04T14:45:00Z 2026-04-05T01:45:00 overlap-first",
      "2026-04-05T15:15:00Z 2026-04-06T01:45:00 exact",
    ]);
    expect(firing({ ...zone, rule, overlap: "both" }, "2026-04-04T00:00:00Z", 2)).toEqual([
      "2026-04-04T14:45:00Z 2026-04-05T01:45:00 overlap-first",
      "2026-04-04T15:15:00Z 2026-04-05T01:45:00#2 overlap-second",
    ]);
  });
});

describe("zones without DST", () => {
  it("Asia/Kathmandu: 09:00 is 03:15Z every day", () => {
    const spec = { timeZone: "Asia/Kathmandu", rule: { cron: "0 9 * * *" } };
    expect(firing(spec, "2026-06-01T00:00:00Z", 2)).toEqual([
      "2026-06-01T03:15:00Z 2026-06-01T09:00:00 exact",
      "2026-06-02T03:15:00Z 2026-06-02T09:00:00 exact",
    ]);
  });

  it("America/Sao_Paulo: the 2018 spring gap shifts, the same night in 2026 has none", () => {
    const spec = { timeZone: "America/Sao_Paulo", rule: { cron: "30 0 * * *" } };
    expect(firing(spec, "2018-11-03T00:00:00Z", 3)).toEqual([
      "2018-11-03T03:30:00Z 2018-11-03T00:30:00 exact",
      "2018-11-04T03:30:00Z 2018-11-04T00:30:00 gap-shifted",
      "2018-11-05T02:30:00Z 2018-11-05T00:30:00 exact",
    ]);
    expect(firing(spec, "2026-11-01T00:00:00Z", 2)).toEqual([
      "2026-11-01T03:30:00Z 2026-11-01T00:30:00 exact",
      "2026-11-02T03:30:00Z 2026-11-02T00:30:00 exact",
    ]);
  });
});

describe("calendar arithmetic", () => {
  it("Feb 29 yearly fires in leap years only (cron, RRULE, RRULE from its start)", () => {
    const expected = [
      "2028-02-29T12:00:00Z 2028-02-29T12:00:00 exact",
      "2032-02-29T12:00:00Z 2032-02-29T12:00:00 exact",
      "2036-02-29T12:00:00Z 2036-02-29T12:00:00 exact",
    ];
    expect(firing({ rule: { cron: "0 12 29 2 *" } }, "2026-01-01T00:00:00Z", 3)).toEqual(expected);
    const rrule = "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=12;BYMINUTE=0;BYSECOND=0";
    expect(firing({ rule: { rrule } }, "2026-01-01T00:00:00Z", 3)).toEqual(expected);
    const start = utc("2024-02-29T12:00:00Z");
    expect(firing({ rule: { rrule: "FREQ=YEARLY" }, start }, "2026-01-01T00:00:00Z", 3)).toEqual(
      expected,
    );
  });

  it("the last day of each month at 18:00 Paris (cron L, BYMONTHDAY=-1)", () => {
    const expected = [
      "2027-12-31T17:00:00Z 2027-12-31T18:00:00 exact",
      "2028-01-31T17:00:00Z 2028-01-31T18:00:00 exact",
      "2028-02-29T17:00:00Z 2028-02-29T18:00:00 exact",
      "2028-03-31T16:00:00Z 2028-03-31T18:00:00 exact",
      "2028-04-30T16:00:00Z 2028-04-30T18:00:00 exact",
    ];
    const zone = "Europe/Paris";
    const from = "2027-12-01T00:00:00Z";
    expect(firing({ timeZone: zone, rule: { cron: "0 18 L * *" } }, from, 5)).toEqual(expected);
    const rrule = "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=18;BYMINUTE=0";
    expect(firing({ timeZone: zone, rule: { rrule } }, from, 5)).toEqual(expected);
  });

  it("6-field cron has seconds", () => {
    expect(firing({ rule: { cron: "30 0 9 * * *" } }, "2026-06-01T00:00:00Z", 1)).toEqual([
      "2026-06-01T09:00:30Z 2026-06-01T09:00:30 exact",
    ]);
    expect(firing({ rule: { cron: "*/15 * * * * *" } }, "2026-06-01T00:00:00Z", 3)).toEqual([
      "2026-06-01T00:00:15Z 2026-06-01T00:00:15 exact",
      "2026-06-01T00:00:30Z 2026-06-01T00:00:30 exact",
      "2026-06-01T00:00:45Z 2026-06-01T00:00:45 exact",
    ]);
  });

  it("every 2 weeks on Monday at 17:30, counted from the start's week", () => {
    // start Thursday 2026-01-01: its week has no Monday left, so the first is 2026-01-12
    const spec = {
      timeZone: "Europe/Paris",
      rule: { rrule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;BYHOUR=17;BYMINUTE=30;BYSECOND=0" },
      start: utc("2026-01-01T00:00:00Z"),
    };
    expect(firing(spec, "2026-01-01T00:00:00Z", 3)).toEqual([
      "2026-01-12T16:30:00Z 2026-01-12T17:30:00 exact",
      "2026-01-26T16:30:00Z 2026-01-26T17:30:00 exact",
      "2026-02-09T16:30:00Z 2026-02-09T17:30:00 exact",
    ]);
  });

  it("cron's day-of-month and weekday match either; RRULE's match both", () => {
    // 2026-03-13 is a Friday; the 13ths of Jan and Feb 2026 are a Tuesday and a Friday
    expect(firing({ rule: { cron: "0 9 13 * 5" } }, "2026-01-12T00:00:00Z", 3)).toEqual([
      "2026-01-13T09:00:00Z 2026-01-13T09:00:00 exact",
      "2026-01-16T09:00:00Z 2026-01-16T09:00:00 exact",
      "2026-01-23T09:00:00Z 2026-01-23T09:00:00 exact",
    ]);
    const rrule = "FREQ=MONTHLY;BYMONTHDAY=13;BYDAY=FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0";
    expect(firing({ rule: { rrule } }, "2026-01-12T00:00:00Z", 2)).toEqual([
      "2026-02-13T09:00:00Z 2026-02-13T09:00:00 exact",
      "2026-03-13T09:00:00Z 2026-03-13T09:00:00 exact",
    ]);
  });

  it("the second Friday, and the last weekday of the month (croner and rrule-temporal paths)", () => {
    // second Fridays of 2026: Jan 9, Feb 13; last weekdays: Jan 30 (Fri), Feb 27 (Fri)
    expect(firing({ rule: { cron: "0 9 * * FRI#2" } }, "2026-01-01T00:00:00Z", 2)).toEqual([
      "2026-01-09T09:00:00Z 2026-01-09T09:00:00 exact",
      "2026-02-13T09:00:00Z 2026-02-13T09:00:00 exact",
    ]);
    const rrule = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=9;BYMINUTE=0;BYSECOND=0";
    expect(firing({ rule: { rrule } }, "2026-01-01T00:00:00Z", 2)).toEqual([
      "2026-01-30T09:00:00Z 2026-01-30T09:00:00 exact",
      "2026-02-27T09:00:00Z 2026-02-27T09:00:00 exact",
    ]);
  });
});

describe("bounds", () => {
  const start = utc("2026-01-01T00:00:00Z");
  it("count, end and UNTIL stop the series; start is inclusive", () => {
    const daily = { rrule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0" };
    const from = "2025-12-01T00:00:00Z";
    expect(firing({ rule: daily, start, count: 2 }, from, 5)).toHaveLength(2);
    expect(firing({ rule: { rrule: `${daily.rrule};COUNT=3` }, start }, from, 5)).toHaveLength(3);
    const end = utc("2026-01-03T09:00:00Z");
    expect(firing({ rule: daily, start, end }, from, 5)).toEqual([
      "2026-01-01T09:00:00Z 2026-01-01T09:00:00 exact",
      "2026-01-02T09:00:00Z 2026-01-02T09:00:00 exact",
      "2026-01-03T09:00:00Z 2026-01-03T09:00:00 exact",
    ]);
    // UNTIL as a date is that whole day in the zone
    const until = { rrule: `${daily.rrule};UNTIL=20260102` };
    expect(firing({ rule: until, start, timeZone: "Europe/Paris" }, from, 5)).toEqual([
      "2026-01-01T08:00:00Z 2026-01-01T09:00:00 exact",
      "2026-01-02T08:00:00Z 2026-01-02T09:00:00 exact",
    ]);
    const atStart = compileRecurrence({ timeZone: "UTC", rule: { cron: "0 0 * * *" }, start });
    expect(iso(atStart.next(0)!.at)).toBe("2026-01-01T00:00:00Z");
  });

  it("a counted series ends after its count, asked from anywhere", () => {
    const r = compileRecurrence({ timeZone: "UTC", rule: { cron: "0 9 * * *" }, start, count: 3 });
    expect(iso(r.next(utc("2026-01-02T10:00:00Z"))!.at)).toBe("2026-01-03T09:00:00Z");
    expect(r.next(utc("2026-01-03T09:00:00Z"))).toBeNull();
    expect(r.preview(0, 10)).toHaveLength(3);
  });
});
