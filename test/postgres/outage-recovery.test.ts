import { describe, expect, it } from "vitest";
import pino from "pino";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { trackCalls } from "../support/harness.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

// halts or restarts its server: one of its own, not its worker's shared one
const pg = usePostgresServer({ own: true });

/** The loop failures a logger saw: which loop, when (the test's clock), and its retry delay. */
function failureLog(clock: ManualClock) {
  const failures: { loop: string; at: number; retryInMs: number }[] = [];
  const logger = pino(
    { level: "error" },
    {
      write(line: string) {
        const o = JSON.parse(line) as { loop?: string; retryInMs?: number };
        if (o.loop !== undefined && o.retryInMs !== undefined) {
          failures.push({ loop: o.loop, at: clock.now(), retryInMs: o.retryInMs });
        }
      },
    },
  );
  return { failures, logger };
}

/**
 * After a long outage every loop of a node is deep in its own error backoff (the watcher's
 * grows to 5-10 s). When the database is back, the first loop to get through (here the
 * lease keeper, which renews a held claim and retries within a second) wakes the others, so
 * a job due during the outage is claimed and fired at once, not when the watcher's own
 * retry comes. Real PostgreSQL, stopped and started again; the node's clock is a
 * ManualClock, so the backoffs are the clock's and nothing sleeps.
 */
describe("postgres: a node resumes at once when the database is back", () => {
  it("a job due during a 60 s outage fires within a second of the database's return", async (ctx) => {
    if (!pg.server.owned) ctx.skip(); // PG_URL: a server this test may not stop
    const store = await PostgresStore.open({ url: pg.url, schema: freshSchema("outage") });
    // The database's clock is real time, the test's is not (see test/support/harness.ts).
    Object.defineProperty(store, "clockRead", { value: undefined });
    const clock = new ManualClock(Date.now(), { settle: trackCalls(store) });
    const { failures, logger } = failureLog(clock);
    const scheduler = new Scheduler({ store, clock, logger, shards: () => undefined });
    let releaseHeld: () => void = () => {};
    scheduler.handle("held", () => new Promise<void>((r) => (releaseHeld = r)));
    const fired: number[] = [];
    scheduler.handle("due-in-outage", () => {
      fired.push(clock.now());
    });
    try {
      // A claim held in memory through the outage: the keeper keeps trying to renew it.
      await scheduler.schedule({ dueAt: clock.now(), target: "held" });
      const outageStart = clock.now() + 1000;
      await scheduler.schedule({ dueAt: outageStart + 30_000, target: "due-in-outage" });
      scheduler.start();
      await clock.advance(1000);
      await pg.server.halt();
      // 60 s of outage in 250 ms steps, then on to a moment just after a watcher failure
      // that planned its retry at least 5 s later.
      for (let t = 0; t < 60_000; t += 250) await clock.advance(250);
      const planned = () => failures.filter((f) => f.loop === "watcher").at(-1)!;
      while (planned().retryInMs < 5000 || clock.now() - planned().at > 100) {
        await clock.advance(50);
      }
      const watcherRetryAt = planned().at + planned().retryInMs;
      await pg.server.resume();
      const backAt = clock.now();
      while (fired.length === 0 && clock.now() < backAt + 1500) await clock.advance(50);

      expect(fired).toHaveLength(1);
      expect(fired[0]!).toBeLessThan(backAt + 1500);
      expect(fired[0]!).toBeLessThan(watcherRetryAt - 3000);
      // the keeper got through first and woke the watcher
      expect(failures.some((f) => f.loop === "lease-keeper" && f.at > outageStart)).toBe(true);
    } finally {
      releaseHeld();
      await scheduler.close({ timeoutMs: 1000 });
    }
  }, 60_000);
});
