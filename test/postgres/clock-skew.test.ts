import { describe, expect, it, vi } from "vitest";
import { Writable } from "node:stream";
import pino from "pino";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { ClockSkewCheck } from "../../src/engine/clock-skew.js";
import { ServiceMetrics } from "../../src/service/metrics.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import type { Store } from "../../src/store/store.js";
import { makeHarness } from "../support/harness.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const server = usePostgresServer();

function capturingLogger() {
  const lines: { level: number; msg: string; skewMs?: number; roundTripMs?: number }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino({ level: "warn" }, sink), lines };
}

async function openStore() {
  return PostgresStore.open({
    url: server.url,
    schema: freshSchema("skew"),
    shardCount: 4,
    poolSize: 2,
  });
}

describe("clock skew against PostgreSQL (real server)", () => {
  it("reads the database's clock and warns when this node is off by more than warnMs", async () => {
    const store = await openStore();
    try {
      const before = Date.now();
      const dbNow = await store.clockRead();
      // the server runs on this machine: its clock is this one's
      expect(Math.abs(dbNow - before)).toBeLessThan(1000);

      const { logger, lines } = capturingLogger();
      const clock = new ManualClock(Date.now() + 5000);
      const check = (warnMs: number) =>
        new ClockSkewCheck({
          clock,
          logger,
          storeNow: () => store.clockRead(),
          warnMs,
          intervalMs: 60_000,
        });
      const ahead = await check(1000).runOnce();
      // the manual clock does not move during the read: the skew is what it was set to
      expect(ahead.roundTripMs).toBe(0);
      expect(ahead.skewMs).toBeGreaterThan(4000);
      expect(ahead.skewMs).toBeLessThan(5100);
      expect(lines).toHaveLength(1);
      expect(lines[0]!.level).toBe(40);
      expect(lines[0]!.msg).toMatch(/ms ahead of the database's/);
      expect(lines[0]!.skewMs).toBe(ahead.skewMs);

      // under the threshold: read, kept, not warned about
      await check(10_000).runOnce();
      expect(lines).toHaveLength(1);

      clock.set(Date.now() - 3000);
      const behind = await check(1000).runOnce();
      expect(behind.skewMs).toBeLessThan(-2000);
      expect(lines[1]!.msg).toMatch(/ms behind the database's/);
    } finally {
      await store.close();
    }
  });

  it("a started node checks at once and periodically; stats and metrics carry the skew", async () => {
    const store = await openStore();
    const { logger, lines } = capturingLogger();
    const clock = new ManualClock(Date.now() + 5000);
    const scheduler = new Scheduler({
      store,
      clock,
      logger,
      nodeId: "skewed",
      clockSkewCheckIntervalMs: 60_000,
    });
    const metrics = new ServiceMetrics();
    metrics.watch(scheduler);
    try {
      expect((await scheduler.stats()).clock.skewMs).toBeNull();
      scheduler.start();
      await clock.advance(0);
      // the check's first reading is a round trip to the real server, not a due time
      await vi.waitFor(async () => expect((await scheduler.stats()).clock.skewMs).not.toBeNull());
      const skew = (await scheduler.stats()).clock.skewMs!;
      expect(skew).toBeGreaterThan(4000);
      expect(skew).toBeLessThan(5100);
      expect(lines.filter((l) => l.skewMs !== undefined)).toHaveLength(1);
      const text = await metrics.registry.metrics();
      const gauge = /^duetime_clock_skew_seconds (\S+)$/m.exec(text);
      expect(Number(gauge?.[1])).toBeCloseTo(skew / 1000, 3);

      // the clock is stepped right (a jump, as NTP would): the next periodic check, a minute
      // of manual time later, reads it in step with the database's
      clock.jump(Date.now() - 60_000 - clock.now());
      await clock.advance(60_000);
      await vi.waitFor(async () =>
        expect(Math.abs((await scheduler.stats()).clock.skewMs!)).toBeLessThan(1000),
      );
      expect(lines.filter((l) => l.skewMs !== undefined)).toHaveLength(1);
    } finally {
      await scheduler.close({ timeoutMs: 1000 });
    }
  });

  it("a store without a clock of its own (SQLite) has no skew check", async () => {
    const h = makeHarness();
    try {
      expect((h.store as Store).clockRead).toBeUndefined();
      h.scheduler.start();
      expect((await h.scheduler.stats()).clock.skewMs).toBeNull();
    } finally {
      await h.close();
    }
  });
});
