import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { WorkCost } from "../../src/engine/work-cost.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

/**
 * A store call that holds the loop `heldMs` before returning its promise (the clock moved
 * while it ran), then `laterMs` more before it resolves (time the loop was free).
 */
function call<T>(clock: ManualClock, heldMs: number, laterMs: number, value: T): () => Promise<T> {
  return () => {
    clock.set(clock.now() + heldMs);
    return new Promise((resolve) =>
      setImmediate(() => {
        clock.set(clock.now() + laterMs);
        resolve(value);
      }),
    );
  };
}

describe("WorkCost.timed", () => {
  it("times a call until it returns its promise, sized by its result", async () => {
    const clock = new ManualClock(T0);
    const cost = new WorkCost(clock);
    expect(cost.estimateMs(10)).toBe(2); // nothing seen: the margin alone
    const rows = await cost.timed((r: string[]) => r.length, call(clock, 20, 500, ["a", "b"]));
    expect(rows).toEqual(["a", "b"]);
    // 10 ms a row (not 260: the 500 ms after the return left the loop free), stretched by
    // half, plus 2 ms
    expect(cost.estimateMs(4)).toBe(1.5 * 40 + 2);
  });

  it("records a size known before the call at once, even when the call then fails", async () => {
    const clock = new ManualClock(T0);
    const cost = new WorkCost(clock);
    const failing = cost.timed(5, () => {
      clock.set(clock.now() + 10);
      return Promise.reject(new Error("disk full"));
    });
    await expect(failing).rejects.toThrow("disk full");
    expect(cost.estimateMs(5)).toBe(1.5 * 10 + 2);
  });

  it("records nothing for a call sized by its result when the call fails", async () => {
    const clock = new ManualClock(T0);
    const cost = new WorkCost(clock);
    const failing = cost.timed(
      (n: number) => n,
      () => {
        clock.set(clock.now() + 10);
        return Promise.reject(new Error("disk full"));
      },
    );
    await expect(failing).rejects.toThrow("disk full");
    expect(cost.estimateMs(5)).toBe(2);
  });

  it("keeps a call's fixed part apart from its part per item", async () => {
    const clock = new ManualClock(T0);
    const cost = new WorkCost(clock);
    await cost.timed(0, call(clock, 4, 0, null)); // an empty call: the fixed part
    await cost.timed(10, call(clock, 24, 0, null)); // 4 ms fixed + 2 ms a job
    expect(cost.estimateMs(0)).toBe(1.5 * 4 + 2);
    expect(cost.estimateMs(3)).toBe(1.5 * (4 + 6) + 2);
  });
});
