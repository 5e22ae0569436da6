import { afterEach, expect, it } from "vitest";
import { InfrastructureError } from "../../src/engine/handler-errors.js";
import type { Logger } from "../../src/engine/logger.js";
import { type Harness, describeOnEveryStore, record } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** A logger that keeps its warnings (the server log is where an outage's details belong). */
function warningsLogger(): { logger: Logger; warnings: { obj: object; msg?: string }[] } {
  const warnings: { obj: object; msg?: string }[] = [];
  const none = (): void => undefined;
  return {
    warnings,
    logger: {
      debug: none,
      info: none,
      error: none,
      warn: (obj, msg) => warnings.push({ obj, ...(msg === undefined ? {} : { msg }) }),
    },
  };
}

describeOnEveryStore("infrastructure errors are not delivery attempts", (make) => {
  it("hands a job back without spending its last attempt, then runs it when the dependency is back", async () => {
    const log = warningsLogger();
    h = await make({ logger: log.logger });
    let databaseUp = false;
    const runs: number[] = [];
    h.scheduler.handle("t", (_job, ctx) => {
      runs.push(ctx.attempt);
      if (!databaseUp) {
        throw new InfrastructureError("signing secret unavailable: database error (ECONNREFUSED)", {
          cause: new Error("connect ECONNREFUSED 10.1.2.3:5432"),
          retryAfterMs: 5000,
        });
      }
      return "sent";
    });
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 100, target: "t", maxAttempts: 1 });
    const events = record(h.scheduler, "deferred", "failed", "dead", "succeeded");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 100);
    await h.scheduler.idle();

    expect(events.map((e) => e.kind)).toEqual(["deferred"]);
    expect(events[0]!.args).toMatchObject({
      error: "signing secret unavailable: database error (ECONNREFUSED)",
      retryAt: T0 + 5100,
    });
    const back = await h.scheduler.get(job.id);
    expect(back).toMatchObject({
      status: "pending",
      attempts: 0,
      maxAttempts: 1,
      dueAt: T0 + 5100,
      lastError: "signing secret unavailable: database error (ECONNREFUSED)",
    });
    // The cause (with the database's address) is in the server log, not in the job.
    expect(back!.lastError).not.toContain("10.1.2.3");
    expect(log.warnings).toHaveLength(1);
    const logged = log.warnings[0]!.obj as { err: Error; id: string };
    expect(logged.id).toBe(job.id);
    expect((logged.err.cause as Error).message).toContain("10.1.2.3:5432");

    databaseUp = true;
    await h.clock.advanceTo(T0 + 5099);
    expect(runs).toEqual([1]);
    await h.clock.advanceTo(T0 + 5100);
    await h.scheduler.idle();
    // The same first attempt again: the outage spent nothing.
    expect(runs).toEqual([1, 1]);
    expect(events.map((e) => e.kind)).toEqual(["deferred", "succeeded"]);
    expect(await h.scheduler.get(job.id)).toMatchObject({
      status: "succeeded",
      attempts: 1,
      lastResult: "sent",
    });
  });

  it("waits the first retry's backoff (with jitter) when the error names no delay, however often it happens", async () => {
    h = await make({ backoffBaseMs: 1000 });
    h.scheduler.handle("t", () => {
      throw new InfrastructureError("key store unavailable");
    });
    const { job } = await h.scheduler.schedule({ dueAt: T0, target: "t", maxAttempts: 2 });
    const dead = record(h.scheduler, "dead", "failed");
    const nextDeferred = (): Promise<{ retryAt: number }> =>
      new Promise((resolve) => h.scheduler.once("deferred", resolve));
    h.scheduler.start();
    let at = T0;
    for (let i = 0; i < 5; i++) {
      const deferred = nextDeferred();
      await h.clock.advanceTo(at);
      const { retryAt } = await deferred;
      expect(retryAt - at).toBeGreaterThanOrEqual(500);
      expect(retryAt - at).toBeLessThanOrEqual(1000);
      at = retryAt;
    }
    expect(dead).toEqual([]);
    // Stopping gives back the claim the watcher already holds for the next try.
    await h.scheduler.stop();
    expect(await h.scheduler.get(job.id)).toMatchObject({
      status: "pending",
      attempts: 0,
      dueAt: at,
      lastError: "key store unavailable",
    });
  });
});
