import { describe, expect, it } from "vitest";
import { TimingWheel } from "../../src/engine/timing-wheel.js";

/** A small deterministic PRNG so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("TimingWheel", () => {
  it("returns every entry exactly once, never before its time, in due order", () => {
    const start = 1_700_000_000_000;
    const wheel = new TimingWheel<number>(start);
    const random = rng(42);
    const due = new Map<number, number>();
    for (let i = 0; i < 5000; i++) {
      // spread over 1 ms .. ~20 minutes to exercise several levels
      const at = start + 1 + Math.floor(random() ** 3 * 1_200_000);
      due.set(i, at);
      expect(wheel.add(at, i)).toBe(true);
    }
    expect(wheel.size).toBe(5000);
    const seen = new Set<number>();
    let now = start;
    let lastAt = -Infinity;
    while (seen.size < 5000) {
      const next = wheel.nextExpiry();
      expect(next).not.toBeNull();
      // jump straight to the next expiry, sometimes a bit beyond it
      now = Math.max(now, next!) + (random() < 0.2 ? Math.floor(random() * 50) : 0);
      for (const { at, item } of wheel.poll(now)) {
        expect(at).toBeLessThanOrEqual(now);
        expect(at).toBe(due.get(item));
        expect(seen.has(item)).toBe(false);
        expect(at).toBeGreaterThanOrEqual(lastAt - 50);
        seen.add(item);
        lastAt = at;
      }
    }
    expect(wheel.size).toBe(0);
    expect(wheel.nextExpiry()).toBeNull();
  });

  it("fires a level-0 entry at its exact millisecond and not one earlier", () => {
    const wheel = new TimingWheel<string>(1000);
    wheel.add(1100, "a");
    wheel.add(5000, "b");
    expect(wheel.poll(1099)).toEqual([]);
    expect(wheel.poll(1100)).toEqual([{ at: 1100, item: "a" }]);
    // 'b' lives on a coarser level first; it cascades down and still fires exactly at 5000
    let now = 1100;
    while (wheel.nextExpiry()! < 5000) {
      now = wheel.nextExpiry()!;
      expect(wheel.poll(now)).toEqual([]);
    }
    expect(wheel.nextExpiry()).toBe(5000);
    expect(wheel.poll(4999)).toEqual([]);
    expect(wheel.poll(5000)).toEqual([{ at: 5000, item: "b" }]);
  });

  it("refuses entries already due so the caller fires them at once", () => {
    const wheel = new TimingWheel<string>(1000);
    expect(wheel.add(1000, "now")).toBe(false);
    expect(wheel.add(500, "past")).toBe(false);
    expect(wheel.size).toBe(0);
  });

  it("drains everything held, in due order", () => {
    const wheel = new TimingWheel<number>(0);
    [300, 10, 70_000, 20].forEach((at) => wheel.add(at, at));
    expect(wheel.drain().map((e) => e.at)).toEqual([10, 20, 300, 70_000]);
    expect(wheel.size).toBe(0);
  });

  it("earliestDue is the earliest entry's time, not the next slot expiry, at every step", () => {
    const start = 1_700_000_000_000;
    const wheel = new TimingWheel<number>(start);
    const random = rng(7);
    const held = new Map<number, number>();
    for (let i = 0; i < 2000; i++) {
      const at = start + 1 + Math.floor(random() ** 2 * 600_000);
      wheel.add(at, i);
      held.set(i, at);
    }
    let now = start;
    let coarser = 0;
    while (held.size > 0) {
      const min = Math.min(...held.values());
      expect(wheel.earliestDue()).toBe(min);
      if (wheel.nextExpiry()! < min) coarser++;
      now = Math.max(now, wheel.nextExpiry()!);
      for (const { item } of wheel.poll(now)) held.delete(item);
    }
    expect(wheel.earliestDue()).toBeNull();
    // the walk met slots that only cascade (expiring before their first entry is due)
    expect(coarser).toBeGreaterThan(10);
  });

  it("a level-1 slot expires before its entry is due; earliestDue says when it is due", () => {
    const wheel = new TimingWheel<string>(0);
    wheel.add(1000, "a"); // beyond level 0 (256 ms): a 256 ms slot from 768
    expect(wheel.nextExpiry()).toBe(768);
    expect(wheel.earliestDue()).toBe(1000);
    expect(wheel.poll(768)).toEqual([]); // cascaded, not due
    expect(wheel.earliestDue()).toBe(1000);
    wheel.add(900, "b");
    expect(wheel.earliestDue()).toBe(900);
  });
});
