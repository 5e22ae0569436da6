import { describe, expect, it } from "vitest";
import { parseDueTime } from "../../src/core/time-input.js";
import { isoInZone, wallTimeInstants, type WallTime } from "../../src/core/wall-time.js";

// Expected instants are written out by hand from the IANA rules of each zone (tzdata), not
// computed by the code under test: e.g. Europe/Paris changes at 01:00 UTC on the last Sunday
// of March (02:00 CET -> 03:00 CEST) and of October (03:00 CEST -> 02:00 CET).
const NOW = Date.UTC(2026, 0, 1);

function wall(text: string): WallTime {
  const [d, t = "00:00"] = text.split("T") as [string, string?];
  const [year, month, day] = d.split("-").map(Number) as [number, number, number];
  const [hour, minute] = t.split(":").map(Number) as [number, number];
  return { year, month, day, hour, minute, second: 0, millisecond: 0 };
}
const utc = (iso: string) => Date.parse(iso);
const read = (text: string, timeZone: string) => parseDueTime(text, { now: NOW, timeZone });

describe("wall times read in a zone", () => {
  it.each([
    ["2026-12-03T10:00:00", "Europe/Paris", "2026-12-03T09:00:00Z"],
    ["2026-07-01T09:00", "Europe/Paris", "2026-07-01T07:00:00Z"],
    ["2026-12-03T10:00:00", "America/New_York", "2026-12-03T15:00:00Z"],
    ["2026-12-03T10:00:00", "Asia/Kathmandu", "2026-12-03T04:15:00Z"],
    ["2026-12-03T10:00:00", "Australia/Lord_Howe", "2026-12-02T23:00:00Z"],
    ["2026-07-03T10:00:00", "Australia/Lord_Howe", "2026-07-02T23:30:00Z"],
    ["2026-12-03", "Europe/Paris", "2026-12-02T23:00:00Z"],
    ["2028-02-29T09:00:00", "Europe/Paris", "2028-02-29T08:00:00Z"],
    ["2026-12-03T10:00:00.250", "UTC", "2026-12-03T10:00:00.250Z"],
    ["2026-12-03 10:00", "UTC", "2026-12-03T10:00:00Z"],
  ])("%s in %s is %s", (text, zone, expected) => {
    expect(read(text, zone)).toBe(utc(expected));
  });

  it("reads a wall time in UTC when no zone is given", () => {
    expect(parseDueTime("2026-12-03T10:00:00", { now: NOW })).toBe(utc("2026-12-03T10:00:00Z"));
  });

  it.each([
    ["2026-02-29T09:00:00", "no Feb 29 in 2026"],
    ["2026-13-01T09:00:00", "month 13"],
    ["2026-04-31T09:00:00", "April has 30 days"],
    ["2026-12-03T24:00:00", "hour 24"],
    ["2026-12-03T10:60:00", "minute 60"],
    ["2026-12-03T10:00:00.1234", "more than milliseconds without an offset"],
    ["2026-12-03T10", "an hour without minutes"],
  ])("refuses %s (%s) naming the field", (text) => {
    expect(() => read(text, "Europe/Paris")).toThrow(/^dueAt: expected an ISO 8601 date and time/);
  });
});

describe("DST: a time the clocks skip, a time they show twice", () => {
  it.each([
    // Paris, 2026-03-29: 02:00 CET -> 03:00 CEST at 01:00Z; 02:30 moves forward an hour
    ["2026-03-29T02:30", "Europe/Paris", "2026-03-29T01:30:00Z"],
    // New York, 2026-03-08: 02:00 EST -> 03:00 EDT at 07:00Z
    ["2026-03-08T02:30", "America/New_York", "2026-03-08T07:30:00Z"],
    // Lord Howe, 2026-10-04: 02:00 +10:30 -> 02:30 +11 at 15:30Z (a 30-minute gap)
    ["2026-10-04T02:15", "Australia/Lord_Howe", "2026-10-03T15:45:00Z"],
  ])("gap: %s in %s fires once, moved forward by the gap, at %s", (text, zone, expected) => {
    const r = wallTimeInstants(wall(text), zone);
    expect(r.kind).toBe("gap");
    expect(read(text, zone)).toBe(utc(expected));
  });

  it.each([
    // Paris, 2026-10-25: 03:00 CEST -> 02:00 CET at 01:00Z
    ["2026-10-25T02:30", "Europe/Paris", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"],
    // New York, 2026-11-01: 02:00 EDT -> 01:00 EST at 06:00Z
    ["2026-11-01T01:30", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"],
    // Lord Howe, 2026-04-05: 02:00 +11 -> 01:30 +10:30 at 15:00Z (a 30-minute overlap)
    ["2026-04-05T01:45", "Australia/Lord_Howe", "2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z"],
  ])("overlap: %s in %s happens at %s and %s; fires on the first", (text, zone, a, b) => {
    const r = wallTimeInstants(wall(text), zone);
    expect(r).toEqual({ kind: "overlap", instants: [utc(a), utc(b)] });
    expect(read(text, zone)).toBe(utc(a));
  });

  it("a zone that abolished DST: Sao Paulo skipped 00:00-01:00 on 2018-11-04, not in 2026", () => {
    // 2018: 00:00 -03 -> 01:00 -02 at 03:00Z; DST was abolished in 2019, -03 all year since
    expect(wallTimeInstants(wall("2018-11-04T00:30"), "America/Sao_Paulo")).toEqual({
      kind: "gap",
      instants: [],
      shifted: utc("2018-11-04T03:30:00Z"),
    });
    expect(wallTimeInstants(wall("2026-11-01T00:30"), "America/Sao_Paulo")).toEqual({
      kind: "exact",
      instants: [utc("2026-11-01T03:30:00Z")],
    });
  });

  it("Kathmandu (+05:45) has no DST: every wall time is exact", () => {
    for (const m of [1, 4, 7, 10]) {
      const w = { ...wall(`2026-0${m}-15T02:30`), month: m };
      expect(wallTimeInstants(w, "Asia/Kathmandu").kind).toBe("exact");
    }
  });
});

describe("isoInZone", () => {
  it("shows the instant with the zone's offset at that instant", () => {
    expect(isoInZone(utc("2026-10-25T00:30:00Z"), "Europe/Paris")).toBe(
      "2026-10-25T02:30:00.000+02:00",
    );
    expect(isoInZone(utc("2026-10-25T01:30:00Z"), "Europe/Paris")).toBe(
      "2026-10-25T02:30:00.000+01:00",
    );
    expect(isoInZone(utc("2026-12-03T04:15:00Z"), "Asia/Kathmandu")).toBe(
      "2026-12-03T10:00:00.000+05:45",
    );
  });
});
