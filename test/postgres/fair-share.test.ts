import { describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { silentLogger } from "../support/harness.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { startTestService } from "../service/helpers.js";

const server = usePostgresServer();
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

describe("fair share and quotas on PostgreSQL", () => {
  it("gives back waiting jobs before their lease runs out: none dead, none run twice, another tenant first", async () => {
    const store = await PostgresStore.open({
      url: server.url,
      schema: freshSchema("fair"),
      poolSize: 4,
    });
    const clock = new ManualClock(T0);
    const scheduler = new Scheduler({
      store,
      clock,
      logger: silentLogger,
      // all shards, without the node services (this test drives the clock)
      shards: () => undefined,
      concurrency: 4,
      tenantConcurrency: 3,
      leaseMs: 3000,
      handlerTimeoutMs: 1000,
      horizonMs: 500,
      leaseSweepIntervalMs: 200,
      maxAttempts: 1,
    });
    try {
      const runs = new Map<string, number>();
      const order: string[] = [];
      let lastStart = 0;
      scheduler.handle("t", async (job) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        order.push(job.tenant);
        lastStart = clock.now() - T0;
        await new Promise<void>((r) => clock.setTimer(r, 900));
      });
      await scheduler.scheduleMany(
        Array.from({ length: 16 }, () => ({ tenant: "a", dueAt: T0, target: "t" })),
      );
      await scheduler.schedule({ tenant: "b", dueAt: T0, target: "t" });
      scheduler.start();
      // The manual clock moves 20 ms per step; each step also lets the database round trips
      // it started finish (a real 10 ms: I/O, not a wait for anything to come due).
      for (let i = 0; i < 1500 && (await scheduler.stats()).counts.succeeded < 17; i++) {
        await clock.advance(20);
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(runs.size).toBe(17);
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      // a runs at most 3 of the 4 slots: b's one job started at once, not behind a's sixteen
      expect(order.slice(0, 4)).toContain("b");
      expect((await scheduler.stats()).counts).toMatchObject({ succeeded: 17, dead: 0 });
      // the last jobs started after the lease they were first claimed with had run out
      expect(lastStart).toBeGreaterThan(3000);
    } finally {
      await scheduler.close();
    }
  });

  it("answers 429 past the live-jobs quota, read from the counters", async () => {
    const t = await startTestService({
      db: `${server.url}?schema=${freshSchema("quota")}`,
      quotas: { maxLiveJobs: 2 },
    });
    try {
      const far = { delayMs: 86_400_000, target: "https://example.com/hook" };
      expect((await t.api("POST", "/v1/jobs/batch", { body: { jobs: [far, far] } })).status).toBe(
        201,
      );
      const over = await t.api("POST", "/v1/jobs", { body: far });
      expect(over.status).toBe(429);
      expect(over.headers.get("retry-after")).toBe("60");
      expect(over.body.error).toMatchObject({ code: "quota-exceeded", field: "tenant" });
      expect((await t.api("GET", "/v1/stats")).body.counts).toMatchObject({ pending: 2 });
    } finally {
      await t.close();
    }
  });
});
