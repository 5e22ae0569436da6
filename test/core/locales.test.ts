import { describe, expect, it } from "vitest";
import { parseDueTime } from "../../src/core/time-input.js";
import { resolveDueTime } from "../../src/core/due-time.js";

// 2026-12-01 12:00 UTC, a Tuesday: "tomorrow at 9" is Wednesday 2026-12-02 09:00 local.
const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const read = (text: string, timeZone: string, locale: string) =>
  parseDueTime(text, { now: NOW, timeZone, locale });

describe("natural language in other languages", () => {
  it.each([
    ["明天早上9點", "Asia/Taipei", "zh-Hant", "2026-12-02T01:00:00Z"],
    ["明天早上9點", "Asia/Taipei", "zh-TW", "2026-12-02T01:00:00Z"],
    ["明天早上9点", "Asia/Shanghai", "zh-Hans", "2026-12-02T01:00:00Z"],
    ["明天早上9点", "Asia/Shanghai", "zh", "2026-12-02T01:00:00Z"],
    ["demain à 9h", "Europe/Paris", "fr", "2026-12-02T08:00:00Z"],
    ["demain à 9h", "America/Montreal", "fr-CA", "2026-12-02T14:00:00Z"],
    ["morgen um 9 Uhr", "Europe/Berlin", "de", "2026-12-02T08:00:00Z"],
    ["mañana a las 9", "Europe/Madrid", "es", "2026-12-02T08:00:00Z"],
    ["明日の午前9時", "Asia/Tokyo", "ja", "2026-12-02T00:00:00Z"],
    ["morgen om 9 uur", "Europe/Amsterdam", "nl", "2026-12-02T08:00:00Z"],
    ["amanhã às 9:00", "America/Sao_Paulo", "pt-BR", "2026-12-02T12:00:00Z"],
    ["завтра в 9:00", "Europe/Moscow", "ru", "2026-12-02T06:00:00Z"],
  ])("%s in %s (%s) is %s", (text, zone, locale, expected) => {
    expect(read(text, zone, locale)).toBe(Date.parse(expected));
  });

  it("refuses text the locale cannot read, naming the field, never guessing", () => {
    // chrono-node's pt reads only "amanhã" of this (noon): refused rather than taken as noon
    expect(() => read("amanhã às 9h", "America/Sao_Paulo", "pt")).toThrow(/^dueAt: expected/);
    expect(() => read("xyzzy plugh", "Europe/Paris", "fr")).toThrow(/^dueAt: expected/);
    // French is not read as English, nor English as French
    expect(() => parseDueTime("demain à 9h", { now: NOW })).toThrow(/^dueAt: expected/);
  });

  it("refuses a language it has no parser for, naming the locale field", () => {
    expect(() => read("tomorrow 9am", "UTC", "xx")).toThrow(
      /^locale: expected a language tag duetime reads: de, en, .* received "xx"/,
    );
    expect(() =>
      resolveDueTime(
        { dueAt: "2026-12-03T10:00:00Z", locale: "tlh" },
        { now: NOW, maxPastMs: null },
        "jobs[2].",
      ),
    ).toThrow(/^jobs\[2\]\.locale: expected a language tag/);
  });

  it("reads wall times and natural language in the context's default zone", () => {
    const ctx = { now: NOW, maxPastMs: null, defaultTimeZone: "Europe/Paris" };
    expect(resolveDueTime({ dueAt: "2026-12-03T10:00:00" }, ctx)).toBe(
      Date.parse("2026-12-03T09:00:00Z"),
    );
    // a zone in the input wins over the default
    expect(resolveDueTime({ dueAt: "2026-12-03T10:00:00", timeZone: "UTC" }, ctx)).toBe(
      Date.parse("2026-12-03T10:00:00Z"),
    );
  });
});
