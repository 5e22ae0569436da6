import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callbackJob } from "../../src/core/callbacks.js";
import { withCallback } from "../../src/engine/callbacks.js";
import { createIdGenerator } from "../../src/core/ids.js";
import type { Job, NewJob } from "../../src/core/job.js";
import type { Settlement, Store } from "../../src/store/store.js";

const T0 = Date.UTC(2026, 4, 1, 9, 0, 0);
const HOUR = 3_600_000;
const LEASE_MS = 30_000;
const CALLBACKS = {
  onSuccess: "https://hooks.example.com/ok",
  onFailure: "https://hooks.example.com/failed",
  onDead: "https://hooks.example.com/dead",
};

/**
 * Outcome callbacks, part of the store contract (run by describeStoreContract): a settlement
 * carrying a callback job stores it with the outcome, in the same transaction (a callback that
 * cannot be written takes its outcome down with it, and a settlement that does not apply
 * writes none); a lease running out writes the failed or dead callback itself; a callback job
 * names the job it reports on and carries no callbacks of its own.
 */
export function describeCallbackContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (callbacks): ${name}`, () => {
    let store: Store;
    let newId: () => string;

    beforeEach(async () => {
      store = await makeStore();
      await store.migrate();
      let clockForIds = T0;
      newId = createIdGenerator(() => clockForIds++);
    });
    afterEach(async () => {
      await store.close();
    });

    function job(over: Partial<NewJob> = {}): NewJob {
      return {
        id: newId(),
        tenant: "acme",
        key: "k1",
        dueAt: T0,
        payload: { n: 1 },
        target: "send-reminder",
        targetOptions: null,
        maxAttempts: 2,
        expireAfterMs: null,
        tags: ["user:42"],
        callbacks: CALLBACKS,
        ...over,
      };
    }

    /** Claims what is due and returns the job under test (callback jobs are claimed too). */
    async function claimOne(now: number): Promise<Job> {
      await store.bucketsStage({ until: now + HOUR, maxRows: 1000 });
      const due = await store.jobsClaimDue({
        now,
        dueBefore: now,
        limit: 10,
        leaseMs: LEASE_MS,
        owner: "node-a",
      });
      const claimed = due.find((j) => j.callbackOf === null);
      expect(claimed).toBeDefined();
      return claimed!;
    }

    /** The settlement as the engine's dispatcher makes it, with its callback (if any). */
    function settled(claimed: Job, st: Settlement, now: number): Settlement {
      return withCallback(claimed, st, now, newId);
    }

    async function callbacksOf(id: string): Promise<Job[]> {
      const all = await store.jobsList({ tenant: "acme", limit: 100 });
      return all.filter((j) => j.callbackOf === id);
    }

    it("stores a job's callbacks and writes exactly one callback with a success", async () => {
      await store.jobsInsert({ jobs: [job()], now: T0 - HOUR });
      const claimed = await claimOne(T0);
      expect(claimed.callbacks).toEqual(CALLBACKS);
      expect(claimed.callbackOf).toBeNull();
      const now = T0 + 250;
      const st = settled(
        claimed,
        { id: claimed.id, fence: claimed.fence, firedAt: T0, outcome: "succeeded", result: 7 },
        now,
      );
      expect(await store.jobsSettle({ now, settlements: [st] })).toEqual([true]);
      // the same settlement again is stale (the claim is gone): nothing more is written
      expect(await store.jobsSettle({ now: now + 1, settlements: [st] })).toEqual([false]);

      const [cb, ...more] = await callbacksOf(claimed.id);
      expect(more).toEqual([]);
      expect(cb).toMatchObject({
        id: st.callback!.id,
        tenant: "acme",
        key: null,
        status: "pending",
        dueAt: now,
        target: CALLBACKS.onSuccess,
        maxAttempts: 2,
        callbacks: null,
        callbackOf: claimed.id,
        payload: {
          event: "succeeded",
          job: {
            id: claimed.id,
            key: "k1",
            tenant: "acme",
            tags: ["user:42"],
            target: "send-reminder",
            status: "succeeded",
            attempts: 1,
            lastError: null,
            result: 7,
            dueAt: new Date(T0).toISOString(),
            firedAt: new Date(T0).toISOString(),
            finishedAt: new Date(now).toISOString(),
          },
        },
      });
      const original = await store.jobGet({ id: claimed.id });
      expect(original).toMatchObject({ status: "succeeded", callbacks: CALLBACKS });
    });

    it("writes onFailure for a retried attempt and onDead for the last", async () => {
      await store.jobsInsert({ jobs: [job()], now: T0 - HOUR });
      const first = await claimOne(T0);
      const retryAt = T0 + 5000;
      const failed = settled(
        first,
        { id: first.id, fence: first.fence, firedAt: T0, outcome: "retry", error: "503", retryAt },
        T0 + 10,
      );
      expect(await store.jobsSettle({ now: T0 + 10, settlements: [failed] })).toEqual([true]);
      expect((await callbacksOf(first.id)).map((j) => j.target)).toEqual([CALLBACKS.onFailure]);

      const second = await claimOne(retryAt);
      const dead = settled(
        second,
        { id: second.id, fence: second.fence, firedAt: retryAt, outcome: "dead", error: "404" },
        retryAt + 10,
      );
      expect(await store.jobsSettle({ now: retryAt + 10, settlements: [dead] })).toEqual([true]);
      const cbs = await callbacksOf(first.id);
      expect(cbs.map((j) => j.target).sort()).toEqual([CALLBACKS.onDead, CALLBACKS.onFailure]);
      const deadCb = cbs.find((j) => j.target === CALLBACKS.onDead)!;
      expect(deadCb.payload).toMatchObject({
        event: "dead",
        job: { status: "dead", attempts: 2, lastError: "404" },
      });
    });

    it("writes the callback in the outcome's transaction: one that cannot be written undoes the outcome", async () => {
      // a pending job holding the id the callback will take, at the due time it will take
      const other = job({ key: null, callbacks: null, dueAt: T0 + HOUR });
      await store.jobsInsert({ jobs: [job(), other], now: T0 - HOUR });
      const claimed = await claimOne(T0);
      const st: Settlement = {
        id: claimed.id,
        fence: claimed.fence,
        firedAt: T0,
        outcome: "succeeded",
        result: null,
        callback: {
          ...callbackJob(
            claimed,
            { event: "succeeded", now: T0, firedAt: T0, error: null, result: null },
            other.id,
          )!,
          dueAt: other.dueAt,
        },
      };
      await expect(store.jobsSettle({ now: T0, settlements: [st] })).rejects.toThrow();
      // neither was written: the job is still claimed under the same token, no callback exists
      expect(await store.jobGet({ id: claimed.id })).toMatchObject({
        status: "claimed",
        fence: claimed.fence,
      });
      expect(await callbacksOf(claimed.id)).toEqual([]);
      expect((await store.jobGet({ id: other.id }))!.callbackOf).toBeNull();
    });

    it("writes the failed and dead callbacks of leases that ran out", async () => {
      await store.jobsInsert({ jobs: [job()], now: T0 - HOUR });
      const first = await claimOne(T0);
      const swept = T0 + LEASE_MS;
      expect(await store.leasesExpire({ now: swept, limit: 10 })).toMatchObject({ requeued: 1 });
      const failed = await callbacksOf(first.id);
      expect(failed.map((j) => j.target)).toEqual([CALLBACKS.onFailure]);
      expect(failed[0]).toMatchObject({
        status: "pending",
        dueAt: swept,
        callbackOf: first.id,
        payload: {
          event: "failed",
          job: {
            status: "pending",
            attempts: 1,
            lastError: "lease expired before the job was acknowledged",
            nextAttemptAt: new Date(T0).toISOString(),
          },
        },
      });

      await claimOne(swept);
      const last = swept + LEASE_MS;
      expect(await store.leasesExpire({ now: last, limit: 10 })).toMatchObject({ dead: 1 });
      const all = await callbacksOf(first.id);
      expect(all.map((j) => j.target).sort()).toEqual([CALLBACKS.onDead, CALLBACKS.onFailure]);
      expect(all.find((j) => j.target === CALLBACKS.onDead)!.payload).toMatchObject({
        event: "dead",
        job: { status: "dead", attempts: 2 },
      });
    });

    it("writes nothing for a job without callbacks, an expiry, or a callback job's own outcome", async () => {
      const plain = job({ key: null, callbacks: null });
      await store.jobsInsert({ jobs: [plain, job({ key: "k2" })], now: T0 - HOUR });
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 1000 });
      const claimed = await store.jobsClaimDue({
        now: T0,
        dueBefore: T0,
        limit: 10,
        leaseMs: LEASE_MS,
        owner: "node-a",
      });
      const [a, b] = [claimed.find((j) => j.id === plain.id)!, claimed.find((j) => j.key)!];
      const sts = [
        settled(a, { id: a.id, fence: a.fence, firedAt: T0, outcome: "succeeded", result: 1 }, T0),
        settled(
          b,
          { id: b.id, fence: b.fence, firedAt: T0, outcome: "expired", error: "late" },
          T0,
        ),
      ];
      expect(sts.map((st) => st.callback)).toEqual([undefined, undefined]);
      expect(await store.jobsSettle({ now: T0, settlements: sts })).toEqual([true, true]);
      const reporting = callbackJob(
        { ...a, callbacks: CALLBACKS },
        { event: "succeeded", now: T0, firedAt: T0, error: null, result: null },
        newId(),
      )!;
      // a callback job is never given callbacks, so it reports on nothing itself
      expect(reporting.callbacks).toBeUndefined();
      expect(
        callbackJob(
          { ...a, callbacks: CALLBACKS, callbackOf: a.id },
          { event: "dead", now: T0, firedAt: T0, error: "x", result: null },
          newId(),
        ),
      ).toBeNull();
      expect(await store.jobsList({ tenant: "acme", limit: 10 })).toHaveLength(2);
    });
  });
}
