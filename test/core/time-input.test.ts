import { describe, expect, it } from "vitest";
import { InvalidJobError } from "../../src/core/errors.js";
import { parseDelay, parseDueTime } from "../../src/core/time-input.js";
import { tzOffsetMinutes } from "../../src/core/wall-time.js";

// Sunday 2026-03-29 is the day Europe/Paris moves from UTC+1 to UTC+2.
const NOW = Date.UTC(2026, 2, 28, 15, 30, 0); // Saturday 16:30 in Paris

/** What a wall-clock time in a zone means, computed independently with Intl by search. */
function wallTime(zone: string, y: number, mo: number, d: number, h: number, mi: number): number {
  const f = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  });
  const want = `${String(d).padStart(2, "0")}/${String(mo).padStart(2, "0")}/${y}, ${String(h).padStart(2, "0")}:${String(mi).padStart(2, "0")}`;
  const base = Date.UTC(y, mo - 1, d, h, mi);
  for (let off = -14 * 60; off <= 14 * 60; off += 15) {
    const t = base - off * 60_000;
    if (f.format(new Date(t)) === want) return t;
  }
  throw new Error("no such wall time");
}

describe("parseDueTime", () => {
  it("takes epoch ms, Dates and ISO times with an offset", () => {
    expect(parseDueTime(1_800_000_000_000, { now: NOW })).toBe(1_800_000_000_000);
    expect(parseDueTime(new Date(NOW + 5), { now: NOW })).toBe(NOW + 5);
    expect(parseDueTime("2026-12-01T09:00:00+01:00", { now: NOW })).toBe(Date.UTC(2026, 11, 1, 8));
    expect(parseDueTime("2026-12-01T09:00:00.250Z", { now: NOW })).toBe(
      Date.UTC(2026, 11, 1, 9, 0, 0, 250),
    );
  });

  it("reads an ISO time without an offset as a wall time, in UTC unless a zone is given", () => {
    expect(parseDueTime("2026-12-01T09:00:00", { now: NOW })).toBe(Date.UTC(2026, 11, 1, 9));
    expect(parseDueTime("2026-12-01T09:00:00", { now: NOW, timeZone: "Europe/Paris" })).toBe(
      Date.UTC(2026, 11, 1, 8),
    );
  });

  it("takes delays", () => {
    expect(parseDueTime("in 10 minutes", { now: NOW })).toBe(NOW + 600_000);
    expect(parseDueTime("in 2h 30m", { now: NOW })).toBe(NOW + 9_000_000);
    expect(parseDueTime("+90s", { now: NOW })).toBe(NOW + 90_000);
    expect(parseDelay("in 1 day and 2 hours")).toBe(93_600_000);
    expect(parseDelay("tomorrow")).toBeNull();
  });

  it("reads 'tomorrow 9am' in the given IANA zone, across a DST change", () => {
    const t = parseDueTime("tomorrow 9am", { now: NOW, timeZone: "Europe/Paris" });
    expect(t).toBe(wallTime("Europe/Paris", 2026, 3, 29, 9, 0));
    // after the change Paris is UTC+2: 9am is 07:00Z
    expect(new Date(t).toISOString()).toBe("2026-03-29T07:00:00.000Z");
    const ny = parseDueTime("tomorrow 9am", { now: NOW, timeZone: "America/New_York" });
    expect(ny).toBe(wallTime("America/New_York", 2026, 3, 29, 9, 0));
    expect(parseDueTime("tomorrow 9am", { now: NOW })).toBe(Date.UTC(2026, 2, 29, 9));
  });

  it("reads other natural phrasing", () => {
    const t = parseDueTime("next friday at 17:30", { now: NOW, timeZone: "Asia/Tokyo" });
    expect(t).toBe(wallTime("Asia/Tokyo", 2026, 4, 3, 17, 30));
  });

  it("names the field, what was expected and what was received", () => {
    const attempt = () => parseDueTime("when pigs fly", { now: NOW, field: "scheduled_at" });
    expect(attempt).toThrow(InvalidJobError);
    expect(attempt).toThrow(
      /^scheduled_at: expected an ISO time with offset, .* received "when pigs fly"$/,
    );
    expect(() => parseDueTime("tomorrow 9am", { now: NOW, timeZone: "Mars/Olympus" })).toThrow(
      'timeZone: expected an IANA time zone name such as Europe/Paris, received "Mars/Olympus"',
    );
    expect(() => parseDueTime(-5, { now: NOW })).toThrow(/dueAt: expected an epoch-ms integer/);
    expect(() => parseDueTime({}, { now: NOW })).toThrow(/received an object/);
  });

  it("refuses an ISO date with an expanded year as out of range, not as a text it cannot read", () => {
    for (const text of ["+275760-09-13T00:00:00Z", "-000001-01-01T00:00:00Z", "10000-01-01"]) {
      expect(() => parseDueTime(text, { now: NOW })).toThrow(
        `dueAt: expected a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (an ISO date with a four-digit year), received "${text}"`,
      );
    }
  });

  it("refuses a text with words chrono did not read, instead of dropping them", () => {
    expect(() => parseDueTime("tomorrow 9am banana", { now: NOW })).toThrow(
      /^dueAt: expected .*, every word of it read \("banana" was not\), received "tomorrow 9am banana"$/,
    );
    expect(() => parseDueTime("next friday at 17:30 Europe/Paris", { now: NOW })).toThrow(
      /with the zone in timeZone \(--tz\), not in the text \("Europe\/Paris" was not read\)/,
    );
    expect(() => parseDueTime("remind me tomorrow at 9", { now: NOW })).toThrow(
      /"remind me" was not/,
    );
    // punctuation around a time read whole is no word
    expect(parseDueTime("tomorrow, 9am.", { now: NOW })).toBe(
      parseDueTime("tomorrow 9am", { now: NOW }),
    );
  });

  it("refuses a recurring phrase instead of reading it as its next time", () => {
    // chrono alone read "every monday at 9am" as the next Monday 09:00: one job, no series.
    for (const text of ["every monday at 9am", "Each day at 8", "every 15 minutes"]) {
      expect(() => parseDueTime(text, { now: NOW, field: "when" })).toThrow(
        `when: expected one time, not a recurring rule (a series: scheduleRecurring, POST /v1/schedules, duetime schedule add), received ${JSON.stringify(text)}`,
      );
    }
    expect(parseDueTime("next monday 9am", { now: NOW })).toBeGreaterThan(NOW);
  });

  it("computes zone offsets", () => {
    expect(tzOffsetMinutes("Europe/Paris", Date.UTC(2026, 0, 1))).toBe(60);
    expect(tzOffsetMinutes("Europe/Paris", Date.UTC(2026, 6, 1))).toBe(120);
    expect(tzOffsetMinutes("UTC", NOW)).toBe(0);
  });
});
