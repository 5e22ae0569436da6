import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

describe("systemClock", () => {
  it("runs a timer due now on the next turn of the event loop, not a millisecond later", async () => {
    const clock = systemClock();
    const ran: string[] = [];
    clock.setTimer(() => ran.push("now"), 0);
    clock.setTimer(() => ran.push("overdue"), -5);
    // immediates run in order: both timers were queued before this one
    await nextTurn();
    expect(ran).toEqual(["now", "overdue"]);
  });

  it("clears timers due now and timers due later", async () => {
    const clock = systemClock();
    const ran: string[] = [];
    const count = (kind: string) =>
      process.getActiveResourcesInfo().filter((r) => r === kind).length;
    const timeouts = count("Timeout");
    clock.clearTimer(clock.setTimer(() => ran.push("now"), 0));
    const later = clock.setTimer(() => ran.push("later"), 60_000);
    expect(count("Timeout")).toBe(timeouts + 1);
    clock.clearTimer(later);
    clock.clearTimer(later);
    expect(count("Timeout")).toBe(timeouts);
    await nextTurn();
    expect(ran).toEqual([]);
  });
});
