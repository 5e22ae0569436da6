import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { dropSchema, freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { startReceiver, startTestService, waitForJob, type TestService } from "./helpers.js";

/**
 * Issue 10 §4: a PostgreSQL outage while claimed jobs' deliveries read the tenant's signing
 * secret used to spend their attempts (64 jobs with maxAttempts 1 dead, never delivered,
 * their last error showing the database's address as the webhook's). An unavailable
 * database is not a delivery attempt.
 */
// halts or restarts its server: one of its own, not its worker's shared one
const pg = usePostgresServer({ own: true });
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

describe("a database outage during delivery (real PostgreSQL, stopped and started)", () => {
  it("hands the jobs back without spending their only attempt, says what failed, and delivers each once the database is back", async (ctx) => {
    if (!pg.server.owned) ctx.skip(); // PG_URL names a server this test cannot stop
    const schema = freshSchema("outage");
    const clock = new ManualClock(T0);
    const t = await startTestService({
      db: `${pg.url}?schema=${schema}`,
      clock,
      secretCacheMs: 0, // every delivery reads the secret from the database
    });
    const rx = await startReceiver();
    const scheduler = t.svc.scheduler;
    const JOBS = 32;
    try {
      const ids: string[] = [];
      for (let i = 0; i < JOBS; i++) {
        const created = await t.api("POST", "/v1/jobs", {
          body: { dueAt: new Date(T0 + 500).toISOString(), target: rx.url, maxAttempts: 1 },
        });
        expect(created.status).toBe(201);
        ids.push(created.body.job.id as string);
      }
      // Due within the timing wheel's horizon: claimed ahead, while the database is up.
      // (Timers of the manual clock run only when it moves: advance(0) runs those due now,
      // such as the watcher's pass once the node's shard leases are taken.)
      await until(async () => {
        await clock.advance(0);
        return (await scheduler.counts()).claimed === JOBS;
      });
      const deferred: { job: { id: string }; error: string; retryAt: number }[] = [];
      t.svc.scheduler.on("deferred", (e) => deferred.push(e));

      await pg.server.halt();
      await clock.advanceTo(T0 + 500); // the wheel fires them: every secret read fails
      await until(async () => (await deliveries(t, "unavailable")) >= JOBS);
      // The hand-backs, retried meanwhile with backoff on the engine's clock, are written once
      // it is back (a `deferred` event is emitted only for a recorded one). The clock moves
      // in 10 ms steps to drive those retries; the jobs are due again by then, so the watcher
      // may claim some of them again at once: their state is checked by their events here.
      await pg.server.resume();
      await until(async () => {
        if (deferred.length >= JOBS) return true;
        await clock.advance(10);
        return false;
      });
      expect(new Set(deferred.map((d) => d.job.id))).toEqual(new Set(ids));
      const port = new URL(pg.url).port;
      for (const d of deferred) {
        expect(d.error).toMatch(/^signing secret unavailable: database error/);
        // Neither the database's address nor its port reaches the tenant.
        expect(d.error).not.toContain("127.0.0.1");
        expect(d.error).not.toContain(port);
        expect(d.error).not.toMatch(/webhook/);
      }
      expect((await scheduler.counts()).dead).toBe(0);

      // Time moves on to their retry times: each is delivered, on its one attempt.
      await until(async () => {
        await clock.advance(10);
        return rx.requests.length >= JOBS;
      });
      await rx.nth(JOBS);
      for (const id of ids) {
        const done = await waitForJob(t, id, (j) => j.status === "succeeded");
        expect(done.attempts).toBe(1);
      }
      // Each delivered exactly once.
      const delivered = rx.requests.map((r) => r.headers["duetime-job-id"]);
      expect(new Set(delivered).size).toBe(JOBS);
      expect(delivered).toHaveLength(JOBS);
      expect(await deliveries(t, "delivered")).toBe(JOBS);
    } finally {
      await pg.server.resume();
      await t.close();
      await rx.close();
      await dropSchema(pg.url, schema);
    }
  });
});

/** The service's own count of webhook attempts with this outcome (its Prometheus registry). */
async function deliveries(t: TestService, outcome: string): Promise<number> {
  const metric = t.svc.metrics.registry.getSingleMetric("duetime_webhook_deliveries_total");
  const { values } = (await metric!.get()) as {
    values: { value: number; labels: { outcome?: string | number } }[];
  };
  return values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

/** Waits for a condition the service reaches on its own (bounded: 10 s). */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached within 10 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}
