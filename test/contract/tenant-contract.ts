import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { Job, NewJob } from "../../src/core/job.js";
import type { Store } from "../../src/store/store.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

/**
 * Tenant isolation of the store's writes, part of the store contract (run by
 * describeStoreContract): an operation carrying another tenant, or a stale version, changes
 * nothing at all, including the idempotency keys of the job's own tenant.
 */
export function describeTenantContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (tenants): ${name}`, () => {
    let store: Store;
    let newId: () => string;

    beforeEach(async () => {
      store = await makeStore();
      let clockForIds = T0;
      newId = createIdGenerator(() => clockForIds++);
    });
    afterEach(async () => {
      await store.close();
    });

    function job(over: Partial<NewJob> & { dueAt: number }): NewJob {
      const id = over.id ?? newId();
      return {
        id,
        tenant: "owner",
        key: null,
        payload: { n: 1 },
        target: "t",
        targetOptions: null,
        maxAttempts: 1,
        expireAfterMs: null,
        ...over,
      };
    }

    /** A job of tenant "owner" with idempotency key "once", dead after its only attempt. */
    async function deadKeyedJob(): Promise<Job> {
      const [r] = await store.jobsInsert({ jobs: [job({ dueAt: T0, key: "once" })], now: T0 });
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 1000 });
      const [c] = await store.jobsClaimDue({
        now: T0,
        dueBefore: T0,
        limit: 10,
        leaseMs: 30_000,
        owner: "node-a",
      });
      await store.jobsSettle({
        now: T0,
        settlements: [{ id: c!.id, fence: c!.fence, firedAt: T0, outcome: "dead", error: "x" }],
      });
      const dead = await store.jobGet({ id: r!.job.id });
      expect(dead).toMatchObject({ status: "dead", key: "once", tenant: "owner" });
      return dead!;
    }

    /** The owner's key is free: a create with it makes a new job, and that job reads back. */
    async function expectKeyFree(dead: Job): Promise<void> {
      const [again] = await store.jobsInsert({
        jobs: [job({ dueAt: T0 + 50, key: "once" })],
        now: T0 + 1,
      });
      expect(again).toMatchObject({ created: true, job: { status: "pending", key: "once" } });
      expect(again!.job.id).not.toBe(dead.id);
      expect(await store.jobGetByKey({ tenant: "owner", key: "once" })).toMatchObject({
        id: again!.job.id,
      });
    }

    it("a retry by another tenant is not-found and leaves the owner's key alone", async () => {
      const dead = await deadKeyedJob();
      const r = await store.jobRetry({
        id: dead.id,
        tenant: "intruder",
        dueAt: T0 + 10,
        now: T0 + 1,
      });
      expect(r).toEqual({ outcome: "not-found" });
      expect(await store.jobGet({ id: dead.id })).toMatchObject({
        status: "dead",
        version: dead.version,
      });
      await expectKeyFree(dead);
    });

    it("a retry with a stale version is a conflict and leaves the key free", async () => {
      const dead = await deadKeyedJob();
      const r = await store.jobRetry({
        id: dead.id,
        tenant: "owner",
        expectedVersion: dead.version - 1,
        dueAt: T0 + 10,
        now: T0 + 1,
      });
      expect(r).toMatchObject({ outcome: "version-conflict", job: { id: dead.id } });
      await expectKeyFree(dead);
    });

    it("the owner's own retry takes the key back", async () => {
      const dead = await deadKeyedJob();
      const r = await store.jobRetry({
        id: dead.id,
        tenant: "owner",
        dueAt: T0 + 10,
        now: T0 + 1,
      });
      expect(r).toMatchObject({ outcome: "rescheduled", job: { id: dead.id, status: "pending" } });
      const [again] = await store.jobsInsert({
        jobs: [job({ dueAt: T0 + 50, key: "once" })],
        now: T0 + 2,
      });
      expect(again).toMatchObject({ created: false, job: { id: dead.id } });
    });

    it("reschedule and cancel by another tenant change nothing", async () => {
      const [r] = await store.jobsInsert({ jobs: [job({ dueAt: T0 + 5000, key: "k" })], now: T0 });
      const mine = r!.job;
      expect(
        await store.jobReschedule({
          id: mine.id,
          tenant: "intruder",
          dueAt: T0 + 9000,
          now: T0,
        }),
      ).toEqual({ outcome: "not-found" });
      expect(await store.jobCancel({ id: mine.id, tenant: "intruder", now: T0 })).toEqual({
        outcome: "not-found",
      });
      expect(await store.jobGet({ id: mine.id, tenant: "intruder" })).toBeNull();
      expect(await store.jobGetByKey({ tenant: "intruder", key: "k" })).toBeNull();
      expect(await store.jobGet({ id: mine.id })).toMatchObject({
        status: "pending",
        dueAt: T0 + 5000,
        version: mine.version,
      });
    });
  });
}
