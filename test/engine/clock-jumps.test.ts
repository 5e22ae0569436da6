import { afterEach, describe, expect, it } from "vitest";
import pino from "pino";
import { Writable } from "node:stream";
import { ManualClock, type Clock } from "../../src/core/clock.js";
import { ClockJumpDetector, type ClockJump } from "../../src/engine/clock-jumps.js";
import { ServiceMetrics } from "../../src/service/metrics.js";
import { type Harness, describeOnEveryStore, record, silentLogger } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const SECOND = 1000;

/** A pino logger whose lines are kept (parsed) for the test to read. */
function capturingLogger() {
  const lines: { level: number; msg: string; jumpMs?: number }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino({ level: "warn" }, sink), lines };
}

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("ManualClock jumps", () => {
  it("steps the wall clock alone: timers stay on the monotonic time", async () => {
    const clock = new ManualClock(T0);
    const ran: number[] = [];
    clock.setTimer(() => ran.push(clock.now()), 5 * SECOND);
    clock.jump(30 * SECOND);
    expect(clock.now()).toBe(T0 + 30 * SECOND);
    expect(clock.monotonicNow()).toBe(0);
    await clock.advance(4 * SECOND);
    expect(ran).toEqual([]);
    await clock.advance(SECOND);
    // due 5 s of elapsed time later, read on the stepped wall clock
    expect(ran).toEqual([T0 + 35 * SECOND]);
    clock.jump(-60 * SECOND);
    clock.setTimer(() => ran.push(clock.now()), SECOND);
    await clock.advance(SECOND);
    expect(ran).toEqual([T0 + 35 * SECOND, T0 - 24 * SECOND]);
  });
});

describe("ClockJumpDetector", () => {
  it("reports a step at or above the threshold once, and ignores drift below it", () => {
    const clock = new ManualClock(T0);
    const jumps: ClockJump[] = [];
    const d = new ClockJumpDetector({
      clock,
      logger: silentLogger,
      thresholdMs: 1000,
      intervalMs: 1000,
      onJump: (j) => jumps.push(j),
    });
    clock.jump(999);
    expect(d.check()).toBeNull();
    // rebased: 999 + 999 in two readings is drift, not a 1998 ms jump
    clock.jump(999);
    expect(d.check()).toBeNull();
    clock.jump(1000);
    expect(d.check()).toEqual({ jumpMs: 1000, at: clock.now() });
    expect(d.check()).toBeNull();
    clock.jump(-5000);
    expect(d.check()?.jumpMs).toBe(-5000);
    expect(jumps.map((j) => j.jumpMs)).toEqual([1000, -5000]);
    expect(d.summary()).toEqual({ forward: 1, backward: 1, last: jumps[1] });
  });

  it("stays silent on a clock that has no monotonic time", () => {
    const manual = new ManualClock(T0);
    const clock: Clock = {
      now: () => manual.now(),
      setTimer: (fn, ms) => manual.setTimer(fn, ms),
      clearTimer: (t) => manual.clearTimer(t),
    };
    const d = new ClockJumpDetector({
      clock,
      logger: silentLogger,
      thresholdMs: 10,
      intervalMs: 1000,
      onJump: () => {
        throw new Error("no jump can be seen without a monotonic clock");
      },
    });
    expect(d.enabled).toBe(false);
    manual.jump(60_000);
    expect(d.check()).toBeNull();
  });
});

describeOnEveryStore("a running scheduler across clock jumps (manual clock)", (make) => {
  it("forward: jobs the jump crosses fire at once, on time by the wall clock; the jump is logged, evented, counted", async () => {
    const { logger, lines } = capturingLogger();
    h = await make({ start: T0, logger });
    const firedAt = new Map<string, number>();
    h.scheduler.handle("t", (job) => {
      firedAt.set(job.id, h.clock.now());
    });
    // one job a second from +10 s to +40 s, and one well after
    const dues = [...Array.from({ length: 31 }, (_, i) => T0 + (10 + i) * SECOND), T0 + 120_000];
    const made = await h.scheduler.scheduleMany(dues.map((dueAt) => ({ dueAt, target: "t" })));
    const jumps = record(h.scheduler, "clockJump");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 9_500);
    expect(firedAt.size).toBe(0);

    h.clock.jump(30 * SECOND); // wall T0 + 39.5 s after 9.5 s of elapsed time
    const jumpedAt = h.clock.now();
    // noticed within one check interval (1 s of elapsed time)
    await h.clock.advance(SECOND);
    expect(jumps.map((j) => j.args.jumpMs)).toEqual([30 * SECOND]);
    const crossed = made.filter(({ job }) => job.dueAt <= jumpedAt);
    expect(crossed).toHaveLength(30);
    for (const { job } of crossed) {
      const at = firedAt.get(job.id);
      expect(at).toBeDefined();
      // never before its due time by this process's wall clock, and at most one check late
      expect(at!).toBeGreaterThanOrEqual(job.dueAt);
      expect(at!).toBeLessThanOrEqual(jumpedAt + SECOND);
    }
    // a job the jump did not cross fires at its own millisecond
    await h.clock.advanceTo(T0 + 40 * SECOND);
    const last = made[30]!.job;
    expect(firedAt.get(last.id)).toBe(last.dueAt);
    await h.clock.advanceTo(T0 + 120 * SECOND);
    expect(firedAt.get(made[31]!.job.id)).toBe(T0 + 120 * SECOND);

    const stats = await h.scheduler.stats();
    expect(stats.clock.jumps).toMatchObject({ forward: 1, backward: 0 });
    expect(stats.clock.jumps.last?.jumpMs).toBe(30 * SECOND);
    expect(stats.clock.skewMs).toBeNull();
    const warned = lines.filter((l) => l.jumpMs === 30 * SECOND);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.level).toBe(40);
    expect(warned[0]!.msg).toMatch(/jumped forward 30000 ms/);
  });

  it("back: nothing fires before its due time by the wall clock, held or newly claimed", async () => {
    const { logger, lines } = capturingLogger();
    h = await make({ start: T0, logger });
    const firedAt = new Map<string, number>();
    h.scheduler.handle("t", (job) => {
      firedAt.set(job.id, h.clock.now());
    });
    // held in the timing wheel when the clock steps back (inside the 1 s horizon)
    const held = await h.scheduler.scheduleMany(
      [T0 + 1_200, T0 + 1_400, T0 + 1_600].map((dueAt) => ({ dueAt, target: "t" })),
    );
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 1_000);
    expect((await h.scheduler.stats()).inFlight).toBe(3);

    h.clock.jump(-30 * SECOND); // wall T0 - 29 s
    await h.clock.advance(SECOND);
    // a job due half a second after the stepped-back now: the wheel's time was 30 s ahead
    const { job: fresh } = await h.scheduler.schedule({ delayMs: 500, target: "t" });
    await h.clock.advanceTo(fresh.dueAt - 1);
    expect(firedAt.size).toBe(0);
    await h.clock.advanceTo(fresh.dueAt);
    expect(firedAt.get(fresh.id)).toBe(fresh.dueAt);

    // the held jobs wait for their due time by the wall clock: 30 s late by elapsed time
    await h.clock.advanceTo(T0 + 1_199);
    expect(firedAt.size).toBe(1);
    await h.clock.advanceTo(T0 + 2_000);
    for (const { job } of held) expect(firedAt.get(job.id)).toBe(job.dueAt);

    const stats = await h.scheduler.stats();
    expect(stats.clock.jumps).toMatchObject({ forward: 0, backward: 1 });
    expect(lines.filter((l) => l.jumpMs === -30 * SECOND)).toHaveLength(1);
  });

  it("counts jumps in the service metrics", async () => {
    h = await make({ start: T0 });
    const metrics = new ServiceMetrics();
    metrics.watch(h.scheduler);
    h.scheduler.start();
    await h.clock.advance(SECOND);
    h.clock.jump(10 * SECOND);
    await h.clock.advance(SECOND);
    h.clock.jump(-2 * SECOND);
    await h.clock.advance(SECOND);
    h.clock.jump(-3 * SECOND);
    await h.clock.advance(SECOND);
    const text = await metrics.registry.metrics();
    expect(text).toContain('duetime_clock_jumps_total{direction="forward"} 1');
    expect(text).toContain('duetime_clock_jumps_total{direction="back"} 2');
    expect(text).toContain("duetime_clock_jump_seconds_count 3");
    expect(text).toContain("duetime_clock_jump_seconds_sum 15");
    // SQLite shares this machine's clock: no skew to report
    expect(text).not.toContain("duetime_clock_skew_seconds");
  });
});
