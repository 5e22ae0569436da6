import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { ServiceLoop } from "../../src/core/loop.js";
import { silentLogger } from "../support/harness.js";

describe("ServiceLoop", () => {
  it("honours a wake asked for while a pass is running", async () => {
    const clock = new ManualClock(0);
    const passes: number[] = [];
    let release: (() => void) | null = null;
    const loop = new ServiceLoop({
      name: "test",
      clock,
      logger: silentLogger,
      pass: async () => {
        passes.push(clock.now());
        if (passes.length === 2) await new Promise<void>((r) => (release = r));
        return 1000;
      },
    });
    loop.start();
    await clock.advance(0);
    await clock.advance(1000);
    expect(passes).toEqual([0, 1000]);
    // the second pass is still running (it read its state already) when a write asks for +10
    loop.wakeAt(1010);
    release!();
    await clock.advance(10);
    expect(passes).toEqual([0, 1000, 1010]);
    await loop.stop();
  });

  it("logs a failed pass and retries it with backoff instead of dying", async () => {
    const clock = new ManualClock(0);
    let calls = 0;
    const errors: unknown[] = [];
    const logger = {
      ...silentLogger,
      error: (obj: object) => errors.push(obj),
    } as typeof silentLogger;
    const loop = new ServiceLoop({
      name: "flaky",
      clock,
      logger,
      errorBackoffMs: { min: 100, max: 1000 },
      pass: async () => {
        calls++;
        if (calls <= 3) throw new Error("database is locked");
        return 60_000;
      },
    });
    loop.start();
    await clock.advance(5000);
    expect(calls).toBe(4);
    expect(errors.length).toBe(3);
    expect(errors[0]).toMatchObject({ loop: "flaky", failures: 1 });
    await loop.stop();
  });

  it("jitters each planned delay in whole ms (times go to the database as bigint)", async () => {
    const clock = new ManualClock(0);
    const passes: number[] = [];
    let r = 0;
    const randoms = [0, 0.999, 0.5];
    const loop = new ServiceLoop({
      name: "jittered",
      clock,
      logger: silentLogger,
      jitter: 0.1,
      random: () => randoms[r++ % randoms.length]!,
      pass: async () => {
        passes.push(clock.now());
        return 1000;
      },
    });
    loop.start();
    await clock.advance(3000);
    // 0.9, then about 1.1, then 1.0 of the interval: never a fractional time
    expect(passes).toEqual([0, 900, 2000, 3000]);
    expect(passes.every(Number.isInteger)).toBe(true);
    await loop.stop();
  });

  it("sleeps after a pass that resolves null until runNow(), which runs at once without a timer", async () => {
    const clock = new ManualClock(0);
    let passes = 0;
    const loop = new ServiceLoop({
      name: "on-demand",
      clock,
      logger: silentLogger,
      pass: async () => {
        passes++;
        return null;
      },
    });
    loop.start(null);
    await clock.advance(60_000);
    expect(passes).toBe(0);
    await loop.runNow(); // the manual clock did not move
    expect(passes).toBe(1);
    expect(clock.pendingTimers).toBe(0);
    await loop.stop();
    await loop.runNow(); // stopped: nothing runs
    expect(passes).toBe(1);
  });
});
