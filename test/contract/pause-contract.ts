import { beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import { pauseExpiredError, type OnResume, type PauseScope } from "../../src/core/pause.js";
import type { PauseStore } from "../../src/store/pause-store.js";
import type { Store } from "../../src/store/store.js";
import { pausingStorePerTest } from "../support/jobs.js";
import { claimAllDue, pausesWorkAll } from "../support/store-steps.js";
import { inserted } from "../support/pauses.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

/**
 * Pauses, part of the store contract (run by describeStoreContract where the store declares
 * `pauses`): a pause holds the pending jobs it covers out of every claim, stores new ones
 * held, and on resume gives them back by its policy; nothing is lost or claimed while held.
 */
export function describePauseContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (pauses): ${name}`, () => {
    const per = pausingStorePerTest(makeStore);
    let store: Store;
    let pauses: PauseStore;
    let newId: () => string;

    beforeEach(() => {
      store = per.store;
      pauses = per.pauses;
      let clockForIds = T0;
      newId = createIdGenerator(() => clockForIds++);
    });

    function job(over: Partial<NewJob> & { dueAt: number }): NewJob {
      return {
        id: newId(),
        tenant: "a",
        key: null,
        payload: null,
        target: "mail",
        targetOptions: null,
        maxAttempts: 3,
        expireAfterMs: null,
        ...over,
      };
    }

    async function insert(jobs: NewJob[], now = T0) {
      return (await store.jobsInsert({ jobs, now })).map((r) => r.job);
    }

    const claimAll = (now: number) => claimAllDue(store, now);

    async function pause(scope: PauseScope, onResume: OnResume = "fire", tenant = "a", now = T0) {
      return inserted(
        await pauses.pauseInsert({ pause: { id: newId(), tenant, scope, onResume }, now }),
      );
    }

    const workAll = (now: number, limit = 2) => pausesWorkAll(pauses, now, limit);

    it("a tenant pause holds its pending jobs (batches), claims take the others", async () => {
      const mine = await insert([0, 1, 2, 3, 4].map((i) => job({ dueAt: T0 + i * HOUR })));
      const other = await insert([job({ tenant: "b", dueAt: T0 })]);
      const p = await pause({ tenant: true });
      expect(p).toMatchObject({ state: "active", tenant: "a", onResume: "fire", heldJobs: 0 });
      await workAll(T0, 2);
      const after = await pauses.pauseGet({ id: p.id });
      expect(after).toMatchObject({ heldJobs: 5, holdComplete: true });
      expect(await pauses.pausedJobsCount({})).toBe(5);
      expect(await pauses.pausedJobsCount({ tenant: "b" })).toBe(0);
      for (const j of mine) {
        expect(await store.jobGet({ id: j.id })).toMatchObject({
          status: "pending",
          pausedBy: p.id,
        });
      }
      const claimed = await claimAll(T0 + 10 * HOUR);
      expect(claimed.map((j) => j.id)).toEqual([other[0]!.id]);
      // still pending (counted so), never lost
      expect((await store.jobsCountByStatus({ tenant: "a" })).pending).toBe(5);
    });

    it("the claim holds covered jobs staged before the pause, before any pause work", async () => {
      const [j] = await insert([job({ dueAt: T0 })]);
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 1000 });
      const p = await pause({ tenant: true });
      expect(await claimAll(T0 + 1000)).toEqual([]);
      expect(await store.jobGet({ id: j!.id })).toMatchObject({
        status: "pending",
        pausedBy: p.id,
      });
      expect((await pauses.pauseGet({ id: p.id }))!.heldJobs).toBe(1);
    });

    it("jobs scheduled while paused are stored held", async () => {
      const p = await pause({ target: "mail" });
      const [held, free] = await insert([job({ dueAt: T0 }), job({ dueAt: T0, target: "sms" })]);
      expect(held).toMatchObject({ pausedBy: p.id });
      expect(free).toMatchObject({ pausedBy: null });
      expect((await claimAll(T0 + 1000)).map((j) => j.id)).toEqual([free!.id]);
      expect(await pauses.pausedJobsCount({ tenant: "a" })).toBe(1);
    });

    it("a tag pause holds the tenant's jobs with that tag, pending before it and new", async () => {
      const [before, untagged] = await insert([
        job({ dueAt: T0, tags: ["user:42", "x"] }),
        job({ dueAt: T0 }),
      ]);
      const p = await pause({ tag: "user:42" });
      await workAll(T0);
      const [after, otherTenant] = await insert([
        job({ dueAt: T0, tags: ["user:42"] }),
        job({ dueAt: T0, tenant: "b", tags: ["user:42"] }),
      ]);
      expect(after!.pausedBy).toBe(p.id);
      expect(await store.jobGet({ id: before!.id })).toMatchObject({ pausedBy: p.id });
      const claimed = (await claimAll(T0 + 1000)).map((j) => j.id).sort();
      expect(claimed).toEqual([untagged!.id, otherTenant!.id].sort());
      expect((await pauses.pauseGet({ id: p.id }))!.heldJobs).toBe(2);
    });

    it("a webhook origin covers every URL under it, never another host", async () => {
      await pause({ target: "https://hooks.example.com" });
      const [under, query, other, longer] = await insert([
        job({ dueAt: T0, target: "https://hooks.example.com/a/b" }),
        job({ dueAt: T0, target: "https://hooks.example.com?x=1" }),
        job({ dueAt: T0, target: "https://other.example.com/a" }),
        job({ dueAt: T0, target: "https://hooks.example.com.evil.test/a" }),
      ]);
      expect(under!.pausedBy).not.toBeNull();
      expect(query!.pausedBy).not.toBeNull();
      const claimed = (await claimAll(T0 + 1000)).map((j) => j.id).sort();
      expect(claimed).toEqual([other!.id, longer!.id].sort());
    });

    it("resume with fire: held jobs come back at their due time and are claimed", async () => {
      const [j] = await insert([job({ dueAt: T0 + 1000 })]);
      const p = await pause({ tenant: true });
      await workAll(T0);
      const r = await pauses.pauseResume({ id: p.id, now: T0 + HOUR });
      expect(r).toMatchObject({ outcome: "resumed", pause: { state: "resuming" } });
      // resumed but not yet given back: still held, still not claimed
      expect(await claimAll(T0 + HOUR)).toEqual([]);
      await workAll(T0 + HOUR);
      expect((await pauses.pauseGet({ id: p.id }))!).toMatchObject({
        state: "resumed",
        heldJobs: 0,
      });
      const claimed = await claimAll(T0 + HOUR);
      expect(claimed).toMatchObject([{ id: j!.id, dueAt: T0 + 1000 }]);
      expect(await pauses.pauseResume({ id: p.id, now: T0 + HOUR })).toMatchObject({
        outcome: "already-resumed",
      });
    });

    it("resume with expire: overdue held jobs expire, later ones stay pending", async () => {
      const [late, later] = await insert([
        job({ dueAt: T0 + 1000 }),
        job({ dueAt: T0 + 5 * HOUR }),
      ]);
      const p = await pause({ tenant: true }, "expire");
      await workAll(T0);
      await pauses.pauseResume({ id: p.id, now: T0 + HOUR });
      await workAll(T0 + HOUR);
      expect(await store.jobGet({ id: late!.id })).toMatchObject({
        status: "expired",
        lastError: pauseExpiredError(p.id),
      });
      expect(await store.jobGet({ id: later!.id })).toMatchObject({
        status: "pending",
        dueAt: T0 + 5 * HOUR,
        pausedBy: null,
      });
    });

    it("resume with shift: overdue held jobs move later by the paused duration", async () => {
      const [late, later] = await insert([
        job({ dueAt: T0 + 10 * 60_000 }),
        job({ dueAt: T0 + 5 * HOUR }),
      ]);
      const p = await pause({ tenant: true }, "shift");
      await workAll(T0);
      await pauses.pauseResume({ id: p.id, now: T0 + HOUR });
      await workAll(T0 + HOUR);
      expect(await store.jobGet({ id: late!.id })).toMatchObject({
        status: "pending",
        dueAt: T0 + HOUR + 10 * 60_000,
      });
      expect((await store.jobGet({ id: later!.id }))!.dueAt).toBe(T0 + 5 * HOUR);
      expect(await claimAll(T0 + HOUR + 9 * 60_000)).toEqual([]);
      expect((await claimAll(T0 + HOUR + 10 * 60_000)).map((j) => j.id)).toEqual([late!.id]);
    });

    it("cancelling a held job leaves its pause's count; other tenants see nothing", async () => {
      const [j] = await insert([job({ dueAt: T0 })]);
      const p = await pause({ tenant: true });
      await workAll(T0);
      expect(await store.jobCancel({ id: j!.id, now: T0 })).toMatchObject({ outcome: "cancelled" });
      expect((await pauses.pauseGet({ id: p.id }))!.heldJobs).toBe(0);
      expect(await pauses.pauseGet({ id: p.id, tenant: "b" })).toBeNull();
      expect(await pauses.pausesList({ tenant: "b" })).toEqual([]);
      expect((await pauses.pausesList({ tenant: "a" })).map((x) => x.id)).toEqual([p.id]);
      expect(await pauses.pauseResume({ id: p.id, tenant: "b", now: T0 })).toEqual({
        outcome: "not-found",
      });
    });

    it("the change feed records a job held and given back", async () => {
      const [j] = await insert([job({ dueAt: T0 })]);
      const p = await pause({ tenant: true });
      await workAll(T0);
      await pauses.pauseResume({ id: p.id, now: T0 + 1000 });
      await workAll(T0 + 1000);
      const page = await store.changesRead({ tenant: "a", limit: 100 });
      expect(page.changes.filter((c) => c.id === j!.id).map((c) => c.kind)).toEqual([
        "scheduled",
        "paused",
        "resumed",
      ]);
    });

    it("retention removes resumed pauses resumed before its time, oldest first; open ones stay", async () => {
      const [j] = await insert([job({ dueAt: T0 + 10 * HOUR, target: "sms" })]);
      const first = await pause({ target: "mail" });
      const second = await pause({ tag: "x" });
      const active = await pause({ tenant: true }, "fire", "b");
      const resuming = await pause({ target: "sms" });
      await workAll(T0);
      expect((await pauses.pauseGet({ id: resuming.id }))!.heldJobs).toBe(1);
      await pauses.pauseResume({ id: first.id, now: T0 + HOUR });
      await pauses.pauseResume({ id: second.id, now: T0 + 3 * HOUR });
      await workAll(T0 + 3 * HOUR);
      // resumed at 5h with its held job not yet given back: resuming, never purged
      await pauses.pauseResume({ id: resuming.id, now: T0 + 5 * HOUR });
      expect((await pauses.pauseGet({ id: resuming.id }))!.state).toBe("resuming");

      expect(await pauses.pausesPurge({ before: T0 + HOUR, limit: 10 })).toBe(0);
      expect(await pauses.pausesPurge({ before: T0 + 2 * HOUR, limit: 10 })).toBe(1);
      expect(await pauses.pauseGet({ id: first.id })).toBeNull();
      expect(await pauses.pausesPurge({ before: T0 + 100 * HOUR, limit: 1 })).toBe(1);
      expect(await pauses.pausesPurge({ before: T0 + 100 * HOUR, limit: 1 })).toBe(0);
      expect((await pauses.pausesList({})).map((p) => p.id)).toEqual([active.id, resuming.id]);
      // the resuming pause's job is still held and given back as before
      await workAll(T0 + 5 * HOUR);
      expect(await pauses.pausedJobsCount({})).toBe(0);
      expect((await claimAll(T0 + 10 * HOUR)).map((c) => c.id)).toEqual([j!.id]);
    });

    it("lists a page: after an id, at most limit, states filtered before the limit", async () => {
      const ps = [];
      for (const tag of ["a", "b", "c", "d"]) ps.push(await pause({ tag }));
      await pauses.pauseResume({ id: ps[1]!.id, now: T0 + 1 });
      const ids = (q: Parameters<PauseStore["pausesList"]>[0]) =>
        pauses.pausesList(q).then((l) => l.map((p) => p.id));
      expect(await ids({ limit: 2 })).toEqual([ps[0]!.id, ps[1]!.id]);
      expect(await ids({ after: ps[1]!.id, limit: 2 })).toEqual([ps[2]!.id, ps[3]!.id]);
      expect(await ids({ states: ["active"], limit: 2 })).toEqual([ps[0]!.id, ps[2]!.id]);
      expect(await ids({ states: ["active"], after: ps[2]!.id })).toEqual([ps[3]!.id]);
      expect(await ids({ tenant: "b", limit: 2 })).toEqual([]);
    });
  });
}
