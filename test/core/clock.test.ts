import { describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";

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

describe("ManualClock settle option", () => {
  it("awaits the given settle before each timer and at the end of an advance", async () => {
    const log: string[] = [];
    // a settle that only resolves after a real timer: work over a socket takes that long
    const clock = new ManualClock(0, {
      settle: async () => {
        await new Promise((r) => setTimeout(r, 2));
        log.push("settled");
      },
    });
    clock.setTimer(() => log.push("a"), 10);
    clock.setTimer(() => log.push("b"), 20);
    await clock.advance(30);
    expect(log).toEqual(["settled", "a", "settled", "b", "settled", "settled"]);
  });
});
