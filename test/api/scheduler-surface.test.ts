import { afterEach, describe, expect, it } from "vitest";
import { InvalidJobError, InvalidJobsError } from "../../src/core/errors.js";
import { makeHarness } from "../support/harness.js";

/**
 * Issue 11 §1: the Scheduler gives adapters what they took from its store and clock before
 * (now, get by key, counters, the store's layout), reports every bad item of a batch at
 * once, and applies one past-time policy to schedule, reschedule and retry alike.
 */

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const MINUTE = 60_000;

let h: ReturnType<typeof makeHarness>;
afterEach(async () => {
  await h?.close();
});

describe("the Scheduler is the only way in", () => {
  it("shows its options without the store and the clock", () => {
    h = makeHarness({ start: T0 });
    const shown = h.scheduler.options as unknown as Record<string, unknown>;
    expect("store" in shown).toBe(false);
    expect("clock" in shown).toBe(false);
    expect(Object.isFrozen(shown)).toBe(true);
    // what adapters read from them, through methods instead
    expect(h.scheduler.now()).toBe(T0);
    expect(h.scheduler.storeInfo()).toEqual({
      kind: "sqlite",
      bucketWidthMs: h.store.bucketWidthMs,
      shardCount: h.store.shardCount,
      ownClock: false,
    });
  });

  it("finds a live job by its idempotency key, within its tenant only", async () => {
    h = makeHarness({ start: T0 });
    const { job } = await h.scheduler.schedule({
      dueAt: T0 + MINUTE,
      target: "t",
      tenant: "acme",
      key: "invoice-42",
    });
    expect((await h.scheduler.getByKey("invoice-42", { tenant: "acme" }))?.id).toBe(job.id);
    expect(await h.scheduler.getByKey("invoice-42", { tenant: "globex" })).toBeNull();
    expect(await h.scheduler.getByKey("invoice-42")).toBeNull(); // the default tenant
    await expect(h.scheduler.getByKey(42 as never)).rejects.toThrow(/^key: expected a string/);
    expect((await h.scheduler.counts({ tenant: "acme" })).pending).toBe(1);
  });

  it("reports every bad item of scheduleMany at once, and stores none", async () => {
    h = makeHarness({ start: T0 });
    const bad = h.scheduler.scheduleMany([
      { dueAt: T0 + 1, target: "t" },
      { dueAt: "next blursday", target: "t" },
      { dueAt: T0 + 2, target: "" },
      { dueAt: T0 + 3, target: "t" },
    ]);
    await expect(bad).rejects.toBeInstanceOf(InvalidJobError);
    const err = (await bad.catch((e: unknown) => e)) as InvalidJobsError;
    expect(err).toBeInstanceOf(InvalidJobsError);
    expect(err.items.map((i) => [i.index, i.error.field])).toEqual([
      [1, "jobs[1].dueAt"],
      [2, "jobs[2].target"],
    ]);
    expect(err.total).toBe(4);
    // it reads as the first bad item's error
    expect(err.field).toBe("jobs[1].dueAt");
    expect(err.message).toMatch(/^jobs\[1\]\.dueAt: expected .*\(2 of 4 jobs are invalid/);
    expect((await h.scheduler.counts()).pending).toBe(0);
  });
});

describe("one past-time policy for schedule, reschedule and retry", () => {
  it("refuses a reschedule or a retry further back than maxPastMs, as schedule does", async () => {
    h = makeHarness({ start: T0, maxPastMs: MINUTE });
    const past = T0 - 2 * MINUTE;
    await expect(h.scheduler.schedule({ dueAt: past, target: "t" })).rejects.toThrow(
      /^dueAt: expected a time no more than 60000 ms in the past/,
    );
    const { job } = await h.scheduler.schedule({ dueAt: T0 + MINUTE, target: "t" });
    await expect(h.scheduler.reschedule(job.id, past)).rejects.toThrow(
      /^dueAt: expected a time no more than 60000 ms in the past/,
    );
    await expect(h.scheduler.reschedule(job.id, "2 hours ago")).rejects.toThrow(
      /^dueAt: expected a time no more than 60000 ms in the past, received "2 hours ago" \(/,
    );
    expect((await h.scheduler.get(job.id))?.dueAt).toBe(T0 + MINUTE); // unchanged
    // within the tolerance, and the reschedule body's fields
    expect((await h.scheduler.reschedule(job.id, T0 - 30_000)).outcome).toBe("rescheduled");
    const r = await h.scheduler.reschedule(job.id, { delayMs: 5000 });
    expect(r.outcome === "rescheduled" && r.job.dueAt).toBe(T0 + 5000);
    await expect(h.scheduler.reschedule(job.id, { when: 1 } as never)).rejects.toThrow(
      /^when: expected no such field/,
    );

    const dead = await deadJob();
    await expect(h.scheduler.retry(dead, { dueAt: past })).rejects.toThrow(
      /^dueAt: expected a time no more than 60000 ms in the past/,
    );
    const retried = await h.scheduler.retry(dead);
    expect(retried.outcome).toBe("rescheduled");
  });

  it("takes the tolerance per call: null accepts any past time (overdue, runs now)", async () => {
    h = makeHarness({ start: T0, maxPastMs: MINUTE });
    const past = T0 - 86_400_000;
    const { job } = await h.scheduler.schedule({ dueAt: past, target: "t" }, { maxPastMs: null });
    expect(job.dueAt).toBe(past);
    // a tighter tolerance for one call, whatever the scheduler's
    const tight = h.scheduler.scheduleMany([{ dueAt: T0 - 5000, target: "t" }], {
      maxPastMs: 1000,
    });
    await expect(tight).rejects.toThrow(/^jobs\[0\]\.dueAt: expected a time no more than 1000 ms/);
    const rescheduled = await h.scheduler.reschedule(job.id, T0 - 86_400_000 * 2, {
      maxPastMs: null,
    });
    expect(rescheduled.outcome).toBe("rescheduled");
  });

  it("reads a retry's wall time in the call's time zone, as reschedule does", async () => {
    // Before, retry put dueAt and delayMs into fields without the zone: the wall time was
    // read in UTC whatever timeZone said, and a bad zone went unchecked.
    h = makeHarness({ start: T0 });
    const dead = await deadJob();
    const wall = "2026-03-02T09:00:00";
    const r = await h.scheduler.retry(dead, { dueAt: wall, timeZone: "Europe/Paris" });
    expect(r.outcome === "rescheduled" && r.job.dueAt).toBe(Date.UTC(2026, 2, 2, 8, 0, 0));
    const { job } = await h.scheduler.schedule({ dueAt: T0 + MINUTE, target: "t" });
    const moved = await h.scheduler.reschedule(job.id, wall, { timeZone: "Europe/Paris" });
    expect(moved.outcome === "rescheduled" && moved.job.dueAt).toBe(Date.UTC(2026, 2, 2, 8));
    await expect(
      h.scheduler.retry(dead, { delayMs: 1000, timeZone: "Mars/Olympus" }),
    ).rejects.toThrow(/^timeZone: expected an IANA time zone/);
  });

  /** A job that went dead: one attempt, its handler throws. */
  async function deadJob(): Promise<string> {
    h.scheduler.handle("fails", () => {
      throw new Error("no");
    });
    const { job } = await h.scheduler.schedule({ dueAt: T0, target: "fails", maxAttempts: 1 });
    h.scheduler.start();
    await h.clock.advance(5);
    await h.scheduler.stop();
    expect((await h.scheduler.get(job.id))?.status).toBe("dead");
    return job.id;
  }
});
