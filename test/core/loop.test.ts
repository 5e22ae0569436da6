import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { LoopGroup, ServiceLoop } from "../../src/core/loop.js";
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

/** A loop whose passes fail while `down()` says so, recording when each pass ran. */
function outageLoop(
  clock: ManualClock,
  name: string,
  down: () => boolean,
  o: { group?: LoopGroup; backoff: { min: number; max: number }; intervalMs: number },
): { loop: ServiceLoop; passes: number[] } {
  const passes: number[] = [];
  const loop = new ServiceLoop({
    name,
    clock,
    logger: silentLogger,
    errorBackoffMs: o.backoff,
    random: () => 1, // the whole backoff: min, 2 min, 4 min, ... up to max
    ...(o.group ? { group: o.group } : {}),
    pass: async () => {
      passes.push(clock.now());
      if (down()) throw new Error("no writable PostgreSQL host");
      return o.intervalMs;
    },
  });
  return { loop, passes };
}

describe("LoopGroup", () => {
  /**
   * A node's watcher (backoff up to 10 s) and its shard heartbeat (retried every second)
   * through a 20 s outage: the database is back at 20,000, the heartbeat gets through at
   * 20,000, and the watcher, deep in its backoff, must not sleep until its own retry.
   */
  async function outage(grouped: boolean): Promise<{ watcher: number[]; heartbeat: number[] }> {
    const clock = new ManualClock(0);
    let isDown = true;
    const group = grouped ? new LoopGroup() : undefined;
    const watcher = outageLoop(clock, "watcher", () => isDown, {
      group,
      backoff: { min: 100, max: 10_000 },
      intervalMs: 30_000,
    });
    const heartbeat = outageLoop(clock, "shard-leases", () => isDown, {
      group,
      backoff: { min: 1000, max: 1000 },
      intervalMs: 1000,
    });
    watcher.loop.start();
    heartbeat.loop.start();
    await clock.advance(19_999);
    isDown = false;
    await clock.advance(1);
    await clock.advance(100);
    await Promise.all([watcher.loop.stop(), heartbeat.loop.stop()]);
    return { watcher: watcher.passes, heartbeat: heartbeat.passes };
  }

  it("wakes the members backing off when one passes again after failing", async () => {
    const alone = await outage(false);
    // Without a group the watcher's next retry after the outage is its own, seconds later.
    expect(alone.heartbeat).toContain(20_000);
    expect(alone.watcher.filter((t) => t >= 20_000)).toEqual([]);

    const grouped = await outage(true);
    expect(grouped.heartbeat).toContain(20_000);
    expect(grouped.watcher.filter((t) => t >= 20_000)).toEqual([20_000]);
  });

  it("does not hurry a member that keeps failing while the others keep passing", async () => {
    const clock = new ManualClock(0);
    const group = new LoopGroup();
    const failing = outageLoop(clock, "settler", () => true, {
      group,
      backoff: { min: 100, max: 5000 },
      intervalMs: 1000,
    });
    const steady = outageLoop(clock, "sweeper", () => false, {
      group,
      backoff: { min: 100, max: 5000 },
      intervalMs: 100,
    });
    failing.loop.start();
    steady.loop.start();
    await clock.advance(20_000);
    await Promise.all([failing.loop.stop(), steady.loop.stop()]);
    expect(steady.passes.length).toBeGreaterThan(150);
    // 0, 100, 300, 700, 1500, 3100, 6300, 11300, 16300: its own backoff and nothing else
    expect(failing.passes).toEqual([0, 100, 300, 700, 1500, 3100, 6300, 11_300, 16_300]);
  });

  it("forgets a stopped member", async () => {
    const clock = new ManualClock(0);
    let isDown = true;
    const group = new LoopGroup();
    const a = outageLoop(clock, "a", () => isDown, {
      group,
      backoff: { min: 100, max: 10_000 },
      intervalMs: 30_000,
    });
    const b = outageLoop(clock, "b", () => isDown, {
      group,
      backoff: { min: 1000, max: 1000 },
      intervalMs: 1000,
    });
    a.loop.start();
    b.loop.start();
    await clock.advance(5000);
    await a.loop.stop();
    isDown = false;
    await clock.advance(1000);
    const ranAfterStop = a.passes.filter((t) => t > 5000);
    await b.loop.stop();
    expect(ranAfterStop).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });
});
