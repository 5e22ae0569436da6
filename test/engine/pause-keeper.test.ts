import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { Writable } from "node:stream";
import { PauseKeeper } from "../../src/engine/pause-keeper.js";
import { makeHarness, silentLogger } from "../support/harness.js";
import { inserted } from "../support/pauses.js";

const HOUR = 3_600_000;

/** A harness with three pending mail jobs and an active pause on mail none of them is held by. */
async function pausedMail() {
  const h = makeHarness();
  for (let i = 1; i <= 3; i++)
    await h.scheduler.schedule({ target: "mail", dueAt: h.clock.now() + i * HOUR });
  // straight into the store: the scheduler's pause() would run the work itself
  const pause = inserted(
    await h.store.pauses!.pauseInsert({
      pause: { id: "p1", tenant: "default", scope: { target: "mail" }, onResume: "fire" },
      now: h.clock.now(),
    }),
  );
  return { h, pause };
}

function keeperOn(h: ReturnType<typeof makeHarness>, extra: { logger?: typeof silentLogger } = {}) {
  return new PauseKeeper({
    pauses: h.store.pauses!,
    clock: h.clock,
    logger: extra.logger ?? silentLogger,
    // no periodic pass inside the test: only a pass that left work may come back at once
    intervalMs: 10 * HOUR,
    batchSize: 1,
    passBudgetMs: 0,
    onReleased: () => {},
    waiting: () => 0,
    handBack: async () => {},
  });
}

describe("pause keeper on the engine's loop type", () => {
  it("a pass stops at its budget; the loop comes back at once until no work is left", async () => {
    const { h, pause } = await pausedMail();
    const keeper = keeperOn(h);
    try {
      expect(await keeper.runOnce()).toEqual({ held: 1, released: 0, more: true });
      keeper.start();
      // 0 ms timers only: the 10 h periodic pass is not what finishes the work
      await h.clock.advance(0);
      expect(await h.store.pauses!.pauseGet({ id: pause.id })).toMatchObject({
        heldJobs: 3,
        holdComplete: true,
      });
      expect(await keeper.runOnce()).toEqual({ held: 0, released: 0, more: false });
    } finally {
      await keeper.stop();
      await h.close();
    }
  });

  it("runNow gives a resumed pause's jobs back without waiting for the periodic pass", async () => {
    const { h, pause } = await pausedMail();
    const keeper = keeperOn(h);
    try {
      keeper.start();
      await h.clock.advance(0);
      await h.store.pauses!.pauseResume({ id: pause.id, now: h.clock.now() });
      await keeper.runNow();
      await h.clock.advance(0);
      expect(await h.store.pauses!.pauseGet({ id: pause.id })).toMatchObject({
        state: "resumed",
        heldJobs: 0,
      });
      expect(await h.store.pauses!.pausedJobsCount({})).toBe(0);
    } finally {
      await keeper.stop();
      await h.close();
    }
  });

  it("a failed pass is logged and retried after the loop's backoff", async () => {
    const { h } = await pausedMail();
    const lines: { msg: string; loop?: string; retryInMs?: number }[] = [];
    const logger = pino(
      { level: "error" },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
          done();
        },
      }),
    );
    const keeper = keeperOn(h, { logger });
    await h.store.close();
    try {
      keeper.start();
      await h.clock.advance(0);
      await h.clock.advance(200);
      const failed = lines.filter((l) => l.loop === "pause-keeper");
      expect(failed.length).toBeGreaterThanOrEqual(2);
      expect(failed[0]!.msg).toBe("pause-keeper pass failed; retrying");
      expect(failed[0]!.retryInMs).toBeGreaterThanOrEqual(50);
    } finally {
      await keeper.stop();
      h.close().catch(() => {});
    }
  });
});
