import { afterEach, describe, expect, it } from "vitest";
import type { JobChange, Scheduler } from "../../src/api/scheduler.js";
import { makeHarness } from "../support/harness.js";

/**
 * Issue 13 §1 on the library: keyMode on schedule (validated with errors naming the field),
 * and get, cancel and reschedule by key with the outcomes and version checks of the by-id
 * calls, inside one tenant.
 */

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const MINUTE = 60_000;

let h: ReturnType<typeof makeHarness>;

/** Handler "t" that holds its job claimed until `release` is called. */
function holdHandler(s: Scheduler): { started: Promise<void>; release: () => void } {
  let release!: () => void;
  const started = new Promise<void>((ok) => {
    s.handle("t", () => {
      ok();
      return new Promise<void>((r) => (release = r));
    });
  });
  return { started, release: () => release() };
}
afterEach(async () => {
  await h?.close();
});

describe("keyMode on schedule", () => {
  it("replaces, debounces within maxWaitMs, and says which; the change is announced", async () => {
    h = makeHarness({ start: T0 });
    const s = h.scheduler;
    const changes: JobChange[] = [];
    s.on("changed", (c) => changes.push(c));
    const first = await s.schedule({ delayMs: MINUTE, target: "t", key: "standup:42" });
    expect(first).toMatchObject({ created: true, outcome: "created" });
    const kept = await s.schedule({ delayMs: 5 * MINUTE, target: "t", key: "standup:42" });
    expect(kept).toMatchObject({ outcome: "existing", job: { dueAt: T0 + MINUTE } });
    const replaced = await s.schedule({
      delayMs: 5 * MINUTE,
      target: "t2",
      payload: { v: 2 },
      key: "standup:42",
      keyMode: "replace",
    });
    expect(replaced).toMatchObject({
      created: false,
      outcome: "replaced",
      job: { id: first.job.id, dueAt: T0 + 5 * MINUTE, target: "t2", payload: { v: 2 } },
    });
    expect(changes.map((c) => c.kind)).toEqual(["scheduled", "replaced"]);

    // debounce: 30 s after each call, at most 60 s after the first
    const d = { target: "t", key: "typing", keyMode: "debounce", maxWaitMs: MINUTE } as const;
    const d1 = await s.schedule({ ...d, delayMs: 30_000 });
    await h.clock.advance(25_000);
    const d2 = await s.schedule({ ...d, delayMs: 30_000 });
    expect(d2.job.dueAt).toBe(T0 + 55_000);
    await h.clock.advance(25_000);
    const d3 = await s.schedule({ ...d, delayMs: 30_000 });
    expect(d3).toMatchObject({ outcome: "replaced", job: { id: d1.job.id, dueAt: T0 + MINUTE } });
    // a first call alone is bounded too
    const lone = await s.schedule({ ...d, key: "other", delayMs: 5 * MINUTE });
    expect(lone.job.dueAt).toBe(h.clock.now() + MINUTE);
  });

  it("answers too-late for a job already firing, and changes nothing", async () => {
    h = makeHarness({ start: T0 });
    const s = h.scheduler;
    const { started, release } = holdHandler(s);
    const { job } = await s.schedule({ dueAt: T0, target: "t", key: "k", payload: 1 });
    s.start();
    await h.clock.advance(10);
    await started;
    const r = await s.schedule({ delayMs: MINUTE, target: "t", key: "k", keyMode: "replace" });
    expect(r).toMatchObject({ created: false, outcome: "too-late", job: { id: job.id } });
    expect(await s.get(job.id)).toMatchObject({ status: "claimed", dueAt: T0, payload: 1 });
    release();
    await s.idle();
  });

  it("refuses bad modes, a mode without a key, and maxWaitMs outside debounce", async () => {
    h = makeHarness({ start: T0 });
    const s = h.scheduler;
    const base = { delayMs: 1000, target: "t", key: "k" };
    await expect(s.schedule({ ...base, keyMode: "merge" as never })).rejects.toThrow(
      'keyMode: expected one of keep, replace, debounce, received "merge"',
    );
    await expect(s.schedule({ delayMs: 1000, target: "t", keyMode: "replace" })).rejects.toThrow(
      /^key: expected a key \(keyMode replace replaces the job holding it\)/,
    );
    await expect(s.schedule({ ...base, keyMode: "replace", maxWaitMs: 10 })).rejects.toThrow(
      /^keyMode: expected debounce \(maxWaitMs bounds a debounce\)/,
    );
    await expect(s.schedule({ ...base, keyMode: "debounce", maxWaitMs: -1 })).rejects.toThrow(
      /^maxWaitMs: expected an integer from 0 to/,
    );
    expect((await s.counts()).pending).toBe(0);
  });
});

describe("by-key operations", () => {
  it("cancels and reschedules the key's live job with the by-id outcomes", async () => {
    h = makeHarness({ start: T0 });
    const s = h.scheduler;
    const { job } = await s.schedule({ delayMs: MINUTE, target: "t", key: "k", tenant: "acme" });
    const acme = { tenant: "acme" };
    // another tenant's key is not found, and nothing changes
    expect(await s.cancelByKey("k", { tenant: "globex" })).toEqual({ outcome: "not-found" });
    expect(await s.rescheduleByKey("k", { delayMs: 1 }, { tenant: "globex" })).toEqual({
      outcome: "not-found",
    });
    expect(await s.cancelByKey("k")).toEqual({ outcome: "not-found" }); // default tenant
    const stale = await s.rescheduleByKey(
      "k",
      { delayMs: 2 * MINUTE },
      { ...acme, expectedVersion: 7 },
    );
    expect(stale).toMatchObject({ outcome: "version-conflict", job: { id: job.id, version: 1 } });
    const moved = await s.rescheduleByKey("k", "in 3 minutes", { ...acme, expectedVersion: 1 });
    expect(moved).toMatchObject({
      outcome: "rescheduled",
      job: { id: job.id, dueAt: T0 + 3 * MINUTE, version: 2 },
    });
    // a bad due time is refused before the key is looked up, found or not
    await expect(s.rescheduleByKey("nope", "whenever", acme)).rejects.toThrow(/^dueAt: expected/);
    const cancelled = await s.cancelByKey("k", acme);
    expect(cancelled).toMatchObject({
      outcome: "cancelled",
      job: { id: job.id, status: "cancelled" },
    });
    // the key is free once its job finished
    expect(await s.cancelByKey("k", acme)).toEqual({ outcome: "not-found" });
    expect(await s.getByKey("k", acme)).toBeNull();
    await expect(s.cancelByKey("" as string, acme)).rejects.toThrow(/^key: expected a string/);
  });

  it("answers too-late for a firing job by key", async () => {
    h = makeHarness({ start: T0 });
    const s = h.scheduler;
    const { started, release } = holdHandler(s);
    const { job } = await s.schedule({ dueAt: T0, target: "t", key: "k" });
    s.start();
    await h.clock.advance(10);
    await started;
    expect(await s.cancelByKey("k")).toMatchObject({ outcome: "too-late", job: { id: job.id } });
    expect(await s.rescheduleByKey("k", { delayMs: MINUTE })).toMatchObject({
      outcome: "too-late",
      job: { id: job.id, status: "claimed" },
    });
    release();
    await s.idle();
  });
});
