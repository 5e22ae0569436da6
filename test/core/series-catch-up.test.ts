import { describe, expect, it } from "vitest";
import { advanceSeries, type Schedule } from "../../src/core/series.js";
import { dailySeries } from "../support/series.js";

/**
 * A series' step past the occurrences it missed (fire-once and skip): the series of one rule
 * missed together share the walk (core/series.ts skipPast keeps each rule's last answer), so
 * the answer must be the walk's own for every series, whatever was asked before. Expected
 * instants written out by hand: a minutely UTC rule pending at 09:00.
 */
const T = Date.UTC(2026, 2, 1, 9, 0, 0);
const MIN = 60_000;

function minutely(
  id: string,
  nextAt: number,
  misfire: Schedule["misfire"] = "fire-once",
): Schedule {
  return dailySeries(id, T - MIN, {
    rule: { cron: "* * * * *" },
    misfire,
    nextJobId: `${id}-job`,
    nextAt,
    nextNominal: "pending",
  });
}

const ids = (() => {
  let n = 0;
  return () => `id${n++}`;
})();

describe("a series catching up past missed occurrences", () => {
  it("each series of one rule gets its own walk's answer, by pending occurrence and now", () => {
    const now = T + 10 * MIN + 30_000; // 09:10:30
    const a = advanceSeries(minutely("a", T), now, ids);
    const b = advanceSeries(minutely("b", T), now, ids);
    // 09:00 fires; 09:01 to 09:10 are missed; next 09:11
    for (const r of [a, b]) {
      expect(r.missed).toBe(10);
      expect(r.schedule.nextAt).toBe(T + 11 * MIN);
      expect(r.schedule.missedCount).toBe(10);
    }
    expect(a.job!.id).not.toBe(b.job!.id);
    // pending at 09:05, same now: 09:06 to 09:10 missed
    const c = advanceSeries(minutely("c", T + 5 * MIN), now, ids);
    expect(c.missed).toBe(5);
    expect(c.schedule.nextAt).toBe(T + 11 * MIN);
    // pending at 09:00 again, later now (09:20:30): 09:01 to 09:20 missed
    const d = advanceSeries(minutely("d", T), now + 10 * MIN, ids);
    expect(d.missed).toBe(20);
    expect(d.schedule.nextAt).toBe(T + 21 * MIN);
  });

  it("skip counts the claimed occurrence too when it is past its tolerance", () => {
    const now = T + 10 * MIN + 30_000;
    const first = advanceSeries(minutely("s1", T, "skip"), now, ids);
    const second = advanceSeries(minutely("s2", T, "skip"), now, ids);
    for (const r of [first, second]) {
      expect(r.missed).toBe(11); // 09:00 itself (10.5 min late, tolerance 1 min) and 09:01-09:10
      expect(r.schedule.nextAt).toBe(T + 11 * MIN);
    }
  });
});
