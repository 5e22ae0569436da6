import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { ServiceLoop } from "../../src/engine/loop.js";
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
});
