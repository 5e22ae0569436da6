import { describe, expect, it } from "vitest";
import { binCounts, binWidth } from "../../src/dashboard/bins.js";
import { DeadCounter } from "../../src/dashboard/dead-counter.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe("display bins", () => {
  it("picks a round width that is a whole number of buckets", () => {
    expect(binWidth(HOUR, MIN, 120)).toBe(MIN);
    expect(binWidth(DAY, MIN, 120)).toBe(15 * MIN);
    expect(binWidth(DAY, HOUR, 120)).toBe(HOUR);
    expect(binWidth(7 * DAY, HOUR, 120)).toBe(2 * HOUR);
    expect(binWidth(365 * DAY, HOUR, 120)).toBe(7 * DAY);
    expect(binWidth(DAY, DAY, 120)).toBe(DAY);
    // An odd bucket width: a multiple of it, never a width that would split a bucket.
    expect(binWidth(DAY, 7 * MIN, 120) % (7 * MIN)).toBe(0);
  });

  it("sums buckets into every bin of the window, empty ones included", () => {
    const bins = binCounts(
      [
        { bucket: 0, pending: 2 },
        { bucket: HOUR, pending: 3 },
        { bucket: 3 * HOUR, pending: 5 },
        { bucket: 9 * HOUR, pending: 1 }, // outside
      ],
      0,
      4 * HOUR,
      2 * HOUR,
    );
    expect(bins).toEqual([
      { start: 0, pending: 5 },
      { start: 2 * HOUR, pending: 5 },
    ]);
  });
});

describe("DeadCounter", () => {
  it("counts dead changes per tenant over the last 24 hours", () => {
    const c = new DeadCounter(0);
    const t0 = 10 * DAY;
    c.record({ kind: "dead", tenant: "a", at: t0 });
    c.record({ kind: "dead", tenant: "a", at: t0 + 2 * HOUR });
    c.record({ kind: "succeeded", tenant: "a", at: t0 + 2 * HOUR });
    c.record({ kind: "dead", tenant: "b", at: t0 + 2 * HOUR });
    expect(c.lastDay(t0 + 3 * HOUR, "a")).toEqual({ count: 2, since: t0 + 3 * HOUR - DAY });
    expect(c.lastDay(t0 + 25 * HOUR, "a").count).toBe(1);
    expect(c.lastDay(t0 + 3 * HOUR, "b").count).toBe(1);
    expect(new DeadCounter(t0).lastDay(t0 + HOUR, "a")).toEqual({ count: 0, since: t0 });
  });
});
