import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { InvalidJobError } from "../../src/core/errors.js";
import type { Job } from "../../src/core/job.js";
import { PauseNotFoundError } from "../../src/core/pause.js";
import {
  describeOnEveryStore,
  makeHarness,
  runOver,
  silentLogger,
  type MakeHarness,
} from "../support/harness.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The harness's start: 2026-03-01 10:00 UTC. */
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

/** A harness whose store has pauses, with a handler recording what fired; null to skip. */
async function firing(make: MakeHarness) {
  const h = await make();
  if (!h.store.pauses) {
    await h.close();
    return null;
  }
  const fired: Job[] = [];
  h.scheduler.handle("mail", (job: Job) => void fired.push(job));
  h.scheduler.handle("sms", (job: Job) => void fired.push(job));
  return { h, fired };
}

describeOnEveryStore("pauses", (make) => {
  it("nothing a pause covers fires while paused; fire late after resume", async (ctx) => {
    const t = await firing(make);
    if (!t) return ctx.skip();
    const { h, fired } = t;
    try {
      const { job: mail } = await h.scheduler.schedule({ target: "mail", dueAt: T0 + MINUTE });
      const { job: sms } = await h.scheduler.schedule({ target: "sms", dueAt: T0 + MINUTE });
      const p = await h.scheduler.pause({ scope: { target: "mail" } });
      h.scheduler.start();
      await runOver(h, T0 + MINUTE);
      await runOver(h, T0 + 30 * MINUTE);
      expect(fired.map((j) => j.id)).toEqual([sms.id]);
      expect(await h.scheduler.get(mail.id)).toMatchObject({ status: "pending", pausedBy: p.id });
      const stats = await h.scheduler.stats();
      expect(stats.paused).toEqual({ jobs: 1, activePauses: 1 });
      expect(await h.scheduler.listPauses()).toMatchObject([{ id: p.id, state: "active" }]);
      h.clock.set(T0 + HOUR);
      const resumed = await h.scheduler.resume(p.id);
      expect(resumed.state).toBe("resuming");
      await runOver(h, T0 + HOUR + 1000);
      expect(fired.map((j) => j.id)).toEqual([sms.id, mail.id]);
      expect(fired[1]!.dueAt).toBe(T0 + MINUTE);
      expect(await h.scheduler.listPauses()).toEqual([]);
      expect(await h.scheduler.listPauses({ states: ["resumed"] })).toMatchObject([
        { id: p.id, heldJobs: 0 },
      ]);
    } finally {
      await h.close();
    }
  });

  it("a claim already waiting in this node's timing wheel is handed back by the pause", async (ctx) => {
    const t = await firing(make);
    if (!t) return ctx.skip();
    const { h, fired } = t;
    try {
      const { job } = await h.scheduler.schedule({ target: "mail", dueAt: T0 + 500 });
      h.scheduler.start();
      await h.scheduler.runOnce();
      expect((await h.scheduler.get(job.id))!.status).toBe("claimed");
      const p = await h.scheduler.pause({ scope: { tenant: true } });
      // past its due time, within its lease (a later step would give it back unstarted anyway)
      await h.clock.advance(1000);
      await h.scheduler.idle();
      expect(fired).toEqual([]);
      expect(await h.scheduler.get(job.id)).toMatchObject({ status: "pending", pausedBy: p.id });
    } finally {
      await h.close();
    }
  });

  it("resume with expire: the overdue job expires unfired; shift: fires after the paused time", async (ctx) => {
    const t = await firing(make);
    if (!t) return ctx.skip();
    const { h, fired } = t;
    try {
      const { job: a } = await h.scheduler.schedule({ target: "mail", dueAt: T0 + MINUTE });
      const { job: b } = await h.scheduler.schedule({ target: "sms", dueAt: T0 + MINUTE });
      const expire = await h.scheduler.pause({ scope: { target: "mail" }, onResume: "expire" });
      const shift = await h.scheduler.pause({ scope: { target: "sms" }, onResume: "shift" });
      h.scheduler.start();
      await runOver(h, T0 + 2 * MINUTE);
      h.clock.set(T0 + HOUR);
      await h.scheduler.resume(expire.id);
      await h.scheduler.resume(shift.id);
      await runOver(h, T0 + HOUR + 1000);
      expect(fired).toEqual([]);
      expect(await h.scheduler.get(a.id)).toMatchObject({ status: "expired" });
      expect(await h.scheduler.get(b.id)).toMatchObject({
        status: "pending",
        dueAt: T0 + HOUR + MINUTE,
      });
      await runOver(h, T0 + HOUR + MINUTE);
      expect(fired.map((j) => j.id)).toEqual([b.id]);
    } finally {
      await h.close();
    }
  });

  it("retention removes a pause resumed longer ago than retentionMs; an active one stays", async (ctx) => {
    const h = await make({ retentionMs: HOUR });
    if (!h.store.pauses) {
      await h.close();
      return ctx.skip();
    }
    try {
      const resumed = await h.scheduler.pause({ scope: { target: "mail" } });
      const active = await h.scheduler.pause({ scope: { target: "sms" } });
      await h.scheduler.resume(resumed.id);
      await h.scheduler.runPauseWork();
      const all = { states: ["active", "resuming", "resumed"] as const };
      h.clock.set(T0 + HOUR - 1);
      await h.scheduler.purgeHistory();
      expect((await h.scheduler.listPauses(all)).map((p) => p.id)).toEqual([resumed.id, active.id]);
      h.clock.set(T0 + HOUR + 1);
      await h.scheduler.purgeHistory();
      expect((await h.scheduler.listPauses(all)).map((p) => p.id)).toEqual([active.id]);
      expect(await h.scheduler.getPause(resumed.id)).toBeNull();
    } finally {
      await h.close();
    }
  });

  it("refuses a bad pause naming the field, and an unknown resume", async (ctx) => {
    const t = await firing(make);
    if (!t) return ctx.skip();
    const { h } = t;
    try {
      const bad = (input: unknown) => h.scheduler.pause(input as never);
      await expect(bad({ scope: { target: "" } })).rejects.toThrow(/scope\.target/);
      await expect(bad({ scope: { tenant: true, tag: "x" } })).rejects.toThrow(InvalidJobError);
      await expect(bad({ scope: { tenant: true }, onResume: "later" })).rejects.toThrow(
        /onResume: expected one of fire, expire, shift/,
      );
      await expect(bad({ scope: {} })).rejects.toThrow(/scope/);
      expect(await h.scheduler.listPauses({ states: ["active", "resuming", "resumed"] })).toEqual(
        [],
      );
      await expect(h.scheduler.resume("01NOPE")).rejects.toThrow(PauseNotFoundError);
      // another tenant's pause is not found either
      const p = await h.scheduler.pause({ scope: { tenant: true } }, { tenant: "a" });
      await expect(h.scheduler.resume(p.id, { tenant: "b" })).rejects.toThrow(PauseNotFoundError);
    } finally {
      await h.close();
    }
  });
});

describe("pauses: another process on the same SQLite file", () => {
  it("its waiting claim is handed back at its pause keeper's next pass, never fired", async () => {
    const h = makeHarness({ start: T0 });
    const other = new SqliteStore({ path: join(h.dir, "jobs.db") });
    const b = new Scheduler({
      store: other,
      clock: h.clock,
      logger: silentLogger,
      pauseWorkIntervalMs: 100,
    });
    const fired: Job[] = [];
    b.handle("mail", (job: Job) => void fired.push(job));
    try {
      const { job } = await b.schedule({ target: "mail", dueAt: T0 + 900 });
      b.start();
      await b.runOnce();
      expect((await b.get(job.id))!.status).toBe("claimed");
      // made by the other process: b hears nothing of it but through its keeper's pass
      const p = await h.scheduler.pause({ scope: { tenant: true } });
      await h.clock.advance(100);
      await b.idle();
      expect((await b.get(job.id))!.status).toBe("pending");
      h.clock.set(T0 + 20 * MINUTE);
      await h.clock.advance(1000);
      await b.idle();
      expect(fired).toEqual([]);
      expect(await b.get(job.id)).toMatchObject({ status: "pending", pausedBy: p.id });
    } finally {
      await b.stop({ timeoutMs: 1000 });
      await other.close();
      await h.close();
    }
  }, 10_000);
});
