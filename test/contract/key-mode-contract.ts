import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import type { Store } from "../../src/store/store.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

/**
 * Key modes, part of the store contract (run by describeStoreContract): a schedule that
 * meets its key's live job keeps it, replaces it while pending, or debounces it within a
 * bound; a claimed job is never replaced, and nothing changes then.
 */
export function describeKeyModeContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (key modes): ${name}`, () => {
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
        id: newId(),
        tenant: "default",
        key: "k",
        payload: { n: 1 },
        target: "t",
        targetOptions: null,
        maxAttempts: 3,
        expireAfterMs: null,
        ...over,
      };
    }

    async function insertOne(j: NewJob, now = T0) {
      const [r] = await store.jobsInsert({ jobs: [j], now });
      return r!;
    }

    async function claimAll(now: number) {
      await store.bucketsStage({ until: now + HOUR, maxRows: 100_000 });
      return store.jobsClaimDue({ now, dueBefore: now, limit: 100, leaseMs: 30_000, owner: "n" });
    }

    it("keeps the live job by default and with keyMode keep", async () => {
      const first = await insertOne(job({ dueAt: T0 + 1000 }));
      expect(first).toMatchObject({ created: true, outcome: "created" });
      for (const keyMode of [undefined, "keep"] as const) {
        const again = await insertOne(job({ dueAt: T0 + 9000, payload: 2, keyMode }));
        expect(again).toMatchObject({
          created: false,
          outcome: "existing",
          job: { id: first.job.id, dueAt: T0 + 1000, payload: { n: 1 }, version: 1 },
        });
      }
    });

    it("replaces a pending job in place: due time, payload, target and options", async () => {
      const first = await insertOne(job({ dueAt: T0 + 1000, tenant: "acme" }));
      // the first bucket is staged (SQLite's hot index holds the job), the new one is not
      await store.bucketsStage({ until: T0, maxRows: 1000 });
      const r = await insertOne(
        job({
          tenant: "acme",
          dueAt: T0 + 2 * HOUR + 5,
          payload: { n: 2 },
          target: "t2",
          targetOptions: { headers: { a: "b" } },
          maxAttempts: 7,
          expireAfterMs: 60_000,
          keyMode: "replace",
        }),
        T0 + 10,
      );
      expect(r).toMatchObject({
        created: false,
        outcome: "replaced",
        job: {
          id: first.job.id,
          tenant: "acme",
          key: "k",
          status: "pending",
          dueAt: T0 + 2 * HOUR + 5,
          bucket: T0 + 2 * HOUR,
          payload: { n: 2 },
          target: "t2",
          targetOptions: { headers: { a: "b" } },
          maxAttempts: 7,
          expireAfterMs: 60_000,
          version: 2,
          createdAt: T0,
          updatedAt: T0 + 10,
        },
      });
      expect(await store.jobGet({ id: first.job.id })).toEqual(r.job);
      expect(await store.jobGetByKey({ tenant: "acme", key: "k" })).toEqual(r.job);
      // the counters moved with it, and it fires at its new time only
      expect(await store.bucketsCounts({ from: 0, to: T0 + 3 * HOUR })).toEqual([
        { bucket: T0 + 2 * HOUR, pending: 1 },
      ]);
      // the feed records the replacement with the state it led to (read before any claim)
      const feed = await store.changesRead({ tenant: "acme", limit: 10 });
      expect(feed.changes.map((c) => [c.kind, c.id, c.status, c.dueAt])).toEqual([
        ["scheduled", first.job.id, "pending", T0 + 1000],
        ["replaced", first.job.id, "pending", T0 + 2 * HOUR + 5],
      ]);
      expect(await claimAll(T0 + HOUR)).toEqual([]);
      const claimed = await claimAll(T0 + 2 * HOUR + 5);
      expect(claimed.map((c) => c.id)).toEqual([first.job.id]);
      expect((await store.jobsCountByStatus({})).claimed).toBe(1);
    });

    it("replaces into an already staged bucket, and fires there", async () => {
      const first = await insertOne(job({ dueAt: T0 + 2 * HOUR }));
      await store.bucketsStage({ until: T0, maxRows: 1000 });
      await insertOne(job({ dueAt: T0 + 500, keyMode: "replace" }));
      const claimed = await claimAll(T0 + 500);
      expect(claimed.map((c) => [c.id, c.dueAt])).toEqual([[first.job.id, T0 + 500]]);
    });

    it("answers too-late for a claimed job and changes nothing", async () => {
      const first = await insertOne(job({ dueAt: T0 }));
      const [claimed] = await claimAll(T0);
      for (const keyMode of ["replace", "debounce"] as const) {
        const r = await insertOne(job({ dueAt: T0 + HOUR, payload: 9, keyMode }), T0 + 1);
        expect(r).toMatchObject({ created: false, outcome: "too-late", job: { id: first.job.id } });
        expect(r.job).toEqual(claimed);
      }
      expect(await store.jobGet({ id: first.job.id })).toEqual(claimed);
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 0, claimed: 1 });
      const kinds = (await store.changesRead({ limit: 10 })).changes.map((c) => c.kind);
      expect(kinds).toEqual(["scheduled", "claimed"]);
    });

    it("debounces: each call moves the due time, never past maxWaitMs after the first", async () => {
      const first = await insertOne(
        job({ dueAt: T0 + 1000, keyMode: "debounce", maxWaitMs: 5000 }),
      );
      const moved = await insertOne(
        job({ dueAt: T0 + 3000, payload: 2, keyMode: "debounce", maxWaitMs: 5000 }),
        T0 + 2000,
      );
      expect(moved).toMatchObject({ outcome: "replaced", job: { dueAt: T0 + 3000, payload: 2 } });
      const capped = await insertOne(
        job({ dueAt: T0 + 5500, payload: 3, keyMode: "debounce", maxWaitMs: 5000 }),
        T0 + 4500,
      );
      expect(capped).toMatchObject({
        outcome: "replaced",
        job: { id: first.job.id, dueAt: T0 + 5000, payload: 3, version: 3 },
      });
      // without a bound it follows the calls
      const free = await insertOne(job({ dueAt: T0 + 9000, keyMode: "debounce" }), T0 + 4600);
      expect(free.job.dueAt).toBe(T0 + 9000);
    });

    it("a key repeated in one call: the first occurrence wins, whatever the mode", async () => {
      const held = await insertOne(job({ dueAt: T0 + 1000 }));
      const rs = await store.jobsInsert({
        jobs: [
          job({ dueAt: T0 + 2000, keyMode: "replace" }),
          job({ dueAt: T0 + 3000, keyMode: "replace" }),
          job({ key: "fresh", dueAt: T0 + 4000 }),
          job({ key: "fresh", dueAt: T0 + 5000, keyMode: "replace" }),
        ],
        now: T0,
      });
      expect(rs.map((r) => [r.outcome, r.job.id, r.job.dueAt])).toEqual([
        ["replaced", held.job.id, T0 + 2000],
        ["existing", held.job.id, T0 + 2000],
        ["created", rs[2]!.job.id, T0 + 4000],
        ["existing", rs[2]!.job.id, T0 + 4000],
      ]);
      expect((await store.jobsCountByStatus({})).pending).toBe(2);
    });

    it("applies concurrent replacements of one key one after the other", async () => {
      const first = await insertOne(job({ dueAt: T0 + 1000 }));
      const n = 8;
      const rs = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          insertOne(job({ dueAt: T0 + HOUR * (i % 3) + i, payload: i, keyMode: "replace" })),
        ),
      );
      expect(rs.map((r) => r.outcome)).toEqual(Array(n).fill("replaced"));
      expect(new Set(rs.map((r) => r.job.id))).toEqual(new Set([first.job.id]));
      expect(rs.map((r) => r.job.version).sort((a, b) => a - b)).toEqual(
        Array.from({ length: n }, (_, i) => i + 2),
      );
      const last = rs.find((r) => r.job.version === n + 1)!.job;
      expect(await store.jobGet({ id: first.job.id })).toEqual(last);
      expect((await store.jobsCountByStatus({})).pending).toBe(1);
      const counts = await store.bucketsCounts({ from: 0, to: T0 + 4 * HOUR });
      expect(counts).toEqual([{ bucket: last.bucket, pending: 1 }]);
    });
  });
}
