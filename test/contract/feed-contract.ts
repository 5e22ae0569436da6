import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseChangeCursor, type StoredChange } from "../../src/core/change.js";
import { ChangeCursorExpiredError } from "../../src/core/errors.js";
import { createIdGenerator } from "../../src/core/ids.js";
import type { Job, NewJob } from "../../src/core/job.js";
import type { Store } from "../../src/store/store.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

/**
 * The change feed, part of the store contract (run by describeStoreContract): every
 * transition a store makes is in its feed, in order, written with the transition (a write
 * that changes nothing records nothing), read per tenant in pages that resume from a cursor
 * without repeats or gaps, and removed by retention in bounded batches.
 */
export function describeFeedContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (change feed): ${name}`, () => {
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
      return {
        id: over.id ?? newId(),
        tenant: "acme",
        key: null,
        payload: { n: 1 },
        target: "t",
        targetOptions: null,
        maxAttempts: 2,
        expireAfterMs: null,
        ...over,
      };
    }

    async function insert(...jobs: NewJob[]): Promise<Job[]> {
      return (await store.jobsInsert({ jobs, now: T0 })).map((r) => r.job);
    }

    async function claim(now: number, owner = "node-a/1"): Promise<Job[]> {
      await store.bucketsStage({ until: now + HOUR, maxRows: 1_000_000 });
      return store.jobsClaimDue({ now, dueBefore: now, limit: 100, leaseMs: 1000, owner });
    }

    /** Every change of `tenant` (or all), read in pages of `limit`. */
    async function readAll(tenant?: string, limit = 1000): Promise<StoredChange[]> {
      const out: StoredChange[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await store.changesRead({
          ...(tenant === undefined ? {} : { tenant }),
          ...(after === undefined ? {} : { after: parseChangeCursor(after) }),
          limit,
        });
        out.push(...page.changes);
        after = page.next;
        if (page.changes.length < limit) return out;
      }
    }

    const brief = (c: StoredChange) => [c.id, c.kind, c.status, c.attempts];

    it("records every transition, in order, with the state it led to", async () => {
      const [a, b, c, d] = await insert(
        job({ dueAt: T0 + 1 }),
        job({ dueAt: T0 + 2 }),
        job({ dueAt: T0 + HOUR * 5 }),
        job({ dueAt: T0 + 3 }),
      );
      await store.jobReschedule({ id: c!.id, dueAt: T0 + HOUR * 6, now: T0 + 5 });
      const first = await claim(T0 + 10);
      expect(first.map((j) => j.id).sort()).toEqual([a!.id, b!.id, d!.id].sort());
      const fenceOf = (id: string) => first.find((j) => j.id === id)!.fence;
      await store.jobsSettle({
        now: T0 + 20,
        settlements: [
          {
            id: a!.id,
            fence: fenceOf(a!.id),
            firedAt: T0 + 10,
            outcome: "retry",
            error: "boom",
            retryAt: T0 + 30,
          },
          { id: b!.id, fence: fenceOf(b!.id), firedAt: T0 + 10, outcome: "dead", error: "gone" },
          {
            id: d!.id,
            fence: fenceOf(d!.id),
            firedAt: T0 + 10,
            outcome: "release",
            retryAt: T0 + 40,
            error: "db down",
          },
        ],
      });
      // A stale settlement (old fence) is not applied and records nothing.
      await store.jobsSettle({
        now: T0 + 21,
        settlements: [{ id: a!.id, fence: 0, firedAt: T0, outcome: "succeeded", result: null }],
      });
      await store.jobRetry({ id: b!.id, dueAt: T0 + 50, now: T0 + 22 });
      await store.jobCancel({ id: c!.id, now: T0 + 23 });
      await store.jobCancel({ id: c!.id, now: T0 + 24 }); // too late: nothing recorded
      const second = await claim(T0 + 60);
      expect(second).toHaveLength(3);
      await store.jobsSettle({
        now: T0 + 70,
        settlements: second
          .filter((j) => j.id === a!.id)
          .map((j) => ({
            id: j.id,
            fence: j.fence,
            firedAt: T0 + 60,
            outcome: "succeeded" as const,
            result: 1,
          })),
      });
      // b's lease runs out (requeued), d's claim is a stale incarnation's (released).
      await store.leasesReleaseStale({
        ownerPrefix: "node-a/",
        exceptOwner: "node-a/2",
        expiresBy: T0 + 60 + 1000,
        now: T0 + 80,
        limit: 1,
      });
      const expired = await store.leasesExpire({ now: T0 + 60 + 2000, limit: 10 });
      expect(expired).toEqual({ requeued: 1, dead: 0, nextExpiresAt: null });

      const all = await readAll("acme");
      const released = all.filter((x) => x.kind === "released").map((x) => x.id);
      expect(released).toHaveLength(1);
      const requeuedId = all.find((x) => x.kind === "requeued")!.id;
      expect([...released, requeuedId].sort()).toEqual([b!.id, d!.id].sort());
      expect(all.slice(0, 5).map(brief)).toEqual([
        [a!.id, "scheduled", "pending", 0],
        [b!.id, "scheduled", "pending", 0],
        [c!.id, "scheduled", "pending", 0],
        [d!.id, "scheduled", "pending", 0],
        [c!.id, "rescheduled", "pending", 0],
      ]);
      expect(all.slice(5, 8).map((x) => x.kind)).toEqual(["claimed", "claimed", "claimed"]);
      const settled = all.slice(8, 11);
      expect(settled.map(brief).sort()).toEqual(
        [
          [a!.id, "failed", "pending", 1],
          [b!.id, "dead", "dead", 1],
          [d!.id, "deferred", "pending", 0],
        ].sort(),
      );
      expect(settled.find((x) => x.kind === "failed")).toMatchObject({
        dueAt: T0 + 30,
        error: "boom",
        at: T0 + 20,
      });
      expect(settled.find((x) => x.kind === "deferred")).toMatchObject({
        dueAt: T0 + 40,
        error: "db down",
      });
      expect(all.slice(11, 13).map(brief)).toEqual([
        [b!.id, "retried", "pending", 0],
        [c!.id, "cancelled", "cancelled", 0],
      ]);
      expect(all.slice(13, 16).map((x) => x.kind)).toEqual(["claimed", "claimed", "claimed"]);
      expect(all.slice(16).map((x) => [x.id, x.kind])).toEqual([
        [a!.id, "succeeded"],
        [released[0], "released"],
        [requeuedId, "requeued"],
      ]);
      expect(all.at(-1)).toMatchObject({
        status: "pending",
        error: "lease expired before the job was acknowledged",
      });
      expect(new Set(all.map((x) => x.cursor)).size).toBe(all.length);
    });

    it("records a write of many jobs in the order written, each with its own fields", async () => {
      // 250: more than one statement's worth of rows where a store writes them in chunks
      const jobs = Array.from({ length: 250 }, (_, i) =>
        job({ dueAt: T0 + HOUR + ((i * 7919) % 1000), tenant: i % 3 === 0 ? "other" : "acme" }),
      );
      await insert(...jobs);
      const changes = await readAll(undefined, 100);
      expect(changes.map((c) => [c.id, c.tenant, c.kind, c.status, c.dueAt])).toEqual(
        jobs.map((j) => [j.id, j.tenant, "scheduled", "pending", j.dueAt]),
      );
    });

    it("reads one tenant's changes in pages that resume from a cursor", async () => {
      const mine: Job[] = [];
      for (let i = 0; i < 7; i++) {
        mine.push(
          ...(await insert(
            job({ dueAt: T0 + HOUR + i }),
            job({ dueAt: T0 + HOUR + i, tenant: "other" }),
          )),
        );
      }
      const acme = mine.filter((j) => j.tenant === "acme").map((j) => j.id);
      const paged = await readAll("acme", 3);
      expect(paged.map((c) => c.id)).toEqual(acme);
      expect(paged.every((c) => c.tenant === "acme")).toBe(true);
      expect((await readAll(undefined, 4)).map((c) => c.id)).toEqual(mine.map((j) => j.id));

      // Where a reader stands after reading everything: nothing comes again, and what is
      // written next comes next, for a quiet tenant too.
      const page = await store.changesRead({ tenant: "acme", limit: 100 });
      const quiet = await store.changesRead({ tenant: "nobody", limit: 100 });
      expect(quiet.changes).toEqual([]);
      const [later] = await insert(job({ dueAt: T0 + HOUR }));
      const [otherLater] = await insert(job({ dueAt: T0 + HOUR, tenant: "nobody" }));
      const resumed = await store.changesRead({
        tenant: "acme",
        after: parseChangeCursor(page.next),
        limit: 100,
      });
      expect(resumed.changes.map((c) => c.id)).toEqual([later!.id]);
      const quietResumed = await store.changesRead({
        tenant: "nobody",
        after: parseChangeCursor(quiet.next),
        limit: 100,
      });
      expect(quietResumed.changes.map((c) => c.id)).toEqual([otherLater!.id]);
      const again = await store.changesRead({
        tenant: "acme",
        after: parseChangeCursor(resumed.next),
        limit: 100,
      });
      expect(again.changes).toEqual([]);
      expect(again.next).toBe(resumed.next);
    });

    it("starts a live view at the head: only what comes after it", async () => {
      await insert(job({ dueAt: T0 + HOUR }));
      const head = await store.changesHead({ tenant: "acme" });
      const [next] = await insert(job({ dueAt: T0 + HOUR }));
      const page = await store.changesRead({
        tenant: "acme",
        after: parseChangeCursor(head),
        limit: 10,
      });
      expect(page.changes.map((c) => c.id)).toEqual([next!.id]);
    });

    it("purges old changes in bounded batches and refuses a cursor it went past", async () => {
      for (let i = 0; i < 5; i++)
        await store.jobsInsert({ jobs: [job({ dueAt: T0 + HOUR })], now: T0 + i });
      const start = await store.changesRead({ tenant: "acme", limit: 1 });
      expect(await store.changesPurge({ before: T0, limit: 10 })).toBe(0);
      expect(await store.changesPurge({ before: T0 + 3, limit: 2 })).toBe(2);
      expect(await store.changesPurge({ before: T0 + 3, limit: 2 })).toBe(1);
      expect(await store.changesPurge({ before: T0 + 3, limit: 2 })).toBe(0);
      const kept = await readAll("acme");
      expect(kept.map((c) => c.at)).toEqual([T0 + 3, T0 + 4]);
      const err = await store
        .changesRead({ tenant: "acme", after: parseChangeCursor(start.next), limit: 10 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ChangeCursorExpiredError);
      const resume = (err as ChangeCursorExpiredError).oldest;
      const fromOldest = await store.changesRead({
        tenant: "acme",
        after: parseChangeCursor(resume),
        limit: 10,
      });
      expect(fromOldest.changes.map((c) => c.at)).toEqual([T0 + 3, T0 + 4]);
    });
  });
}
