import { describe, expect, it } from "vitest";
import { bucketOf } from "../../src/core/buckets.js";
import { shardOf } from "../../src/core/ids.js";
import type { Job } from "../../src/core/job.js";
import type { Store } from "../../src/store/store.js";
import { freshStorePerTest, jobMaker } from "../support/jobs.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

/**
 * Where jobs live, part of the store contract (run by describeStoreContract): the store
 * places every job itself (the bucket of its due time, the shard of its id, from its own
 * width and shard count), on every write that moves it, and a claim or a next-due reading
 * given `shards` sees only jobs of those shards. Stores must be created with several shards.
 */
export function describePlacementContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (placement and shards): ${name}`, () => {
    const t = freshStorePerTest(makeStore);
    const job = jobMaker(T0);

    function expectPlaced(j: Job | null | undefined, dueAt: number): void {
      expect(j).toMatchObject({
        dueAt,
        bucket: bucketOf(dueAt, t.store.bucketWidthMs),
        shard: shardOf(j!.id, t.store.shardCount),
      });
    }

    async function claimAll(now: number, shards?: readonly number[]): Promise<Job[]> {
      await t.store.bucketsStage({ until: now + HOUR, maxRows: 1_000_000 });
      return t.store.jobsClaimDue({
        now,
        dueBefore: now,
        limit: 1000,
        leaseMs: 30_000,
        owner: "node-a",
        ...(shards === undefined ? {} : { shards }),
      });
    }

    /** Jobs due at T0 + i ms, over every shard of the store (ids are random: 200 cover 16 shards). */
    async function insertSpread(n: number): Promise<Job[]> {
      const r = await t.store.jobsInsert({
        jobs: Array.from({ length: n }, (_, i) => job(T0 + i, { maxAttempts: 1 })),
        now: T0,
      });
      const jobs = r.map((x) => x.job);
      expect(new Set(jobs.map((j) => j.shard)).size).toBe(t.store.shardCount);
      return jobs;
    }

    it("places each job in the bucket of its due time and the shard of its id, on every move", async () => {
      expect(t.store.shardCount).toBeGreaterThan(1);
      const dueAt = (i: number) => T0 + i * 7 * 60_000; // 40 jobs over about five hours
      const r = await t.store.jobsInsert({
        jobs: Array.from({ length: 40 }, (_, i) => job(dueAt(i))),
        now: T0,
      });
      for (const [i, x] of r.entries()) {
        expectPlaced(x.job, dueAt(i));
        expectPlaced(await t.store.jobGet({ id: x.job.id }), dueAt(i));
      }
      const [first, second] = await claimAll(T0 + 7 * 60_000);
      const retryAt = T0 + 3 * HOUR + 17;
      const releaseAt = T0 + 6 * HOUR + 5;
      await t.store.jobsSettle({
        now: T0 + 1,
        settlements: [
          {
            id: first!.id,
            fence: first!.fence,
            firedAt: T0,
            outcome: "retry",
            error: "x",
            retryAt,
          },
          {
            id: second!.id,
            fence: second!.fence,
            firedAt: T0,
            outcome: "release",
            error: "y",
            retryAt: releaseAt,
          },
        ],
      });
      expectPlaced(await t.store.jobGet({ id: first!.id }), retryAt);
      expectPlaced(await t.store.jobGet({ id: second!.id }), releaseAt);
      const moved = T0 + 9 * HOUR + 1;
      const rescheduled = await t.store.jobReschedule({ id: r[5]!.job.id, dueAt: moved, now: T0 });
      expect(rescheduled.outcome).toBe("rescheduled");
      expectPlaced(rescheduled.outcome === "rescheduled" ? rescheduled.job : null, moved);
      const counts = await t.store.bucketsCounts({ from: 0, to: T0 + 24 * HOUR });
      const pending = (b: number) => counts.find((c) => c.bucket === b)?.pending ?? 0;
      expect(pending(T0 + 3 * HOUR)).toBeGreaterThanOrEqual(1);
      expect(pending(T0 + 6 * HOUR)).toBe(1);
      expect(pending(T0 + 9 * HOUR)).toBe(1);
      expect(counts.reduce((n, c) => n + c.pending, 0)).toBe(40);
    });

    it("claims only jobs of the given shards, oldest first, and leaves the others pending", async () => {
      const jobs = await insertSpread(200);
      const mine = [0, t.store.shardCount - 1];
      const ofMine = jobs.filter((j) => mine.includes(j.shard));
      const claimed = await claimAll(T0 + 1000, mine);
      expect(claimed.map((j) => j.id)).toEqual(ofMine.map((j) => j.id));
      expect(claimed.every((j) => mine.includes(j.shard))).toBe(true);
      // the other shards' jobs are still there for their owners, all of them
      const rest = await claimAll(T0 + 1000);
      expect(rest.length).toBe(200 - ofMine.length);
      expect(rest.some((j) => mine.includes(j.shard))).toBe(false);
      expect(await claimAll(T0 + 1000, [])).toEqual([]);
    });

    it("claims a shard set in bounded batches while other shards' due jobs wait ahead", async () => {
      const jobs = await insertSpread(200);
      const mine = [1];
      const ofMine = jobs.filter((j) => j.shard === 1).map((j) => j.id);
      await t.store.bucketsStage({ until: T0 + HOUR, maxRows: 1_000_000 });
      const got: string[] = [];
      for (let round = 0; round < ofMine.length + 1; round++) {
        const batch = await t.store.jobsClaimDue({
          now: T0 + 1000,
          dueBefore: T0 + 1000,
          limit: 2,
          leaseMs: 30_000,
          owner: "n",
          shards: mine,
        });
        expect(batch.length).toBeLessThanOrEqual(2);
        if (batch.length === 0) break;
        got.push(...batch.map((j) => j.id));
      }
      expect(got).toEqual(ofMine);
    });

    it("keeps to the given shards when the claim is shared out among tenants", async () => {
      const r = await t.store.jobsInsert({
        jobs: Array.from({ length: 200 }, (_, i) =>
          job(T0 + i, { tenant: i % 2 === 0 ? "a" : "b", maxAttempts: 1 }),
        ),
        now: T0,
      });
      const mine = [0, 1];
      const ofMine = r.map((x) => x.job).filter((j) => mine.includes(j.shard));
      await t.store.bucketsStage({ until: T0 + HOUR, maxRows: 1_000_000 });
      const claimed = await t.store.jobsClaimDue({
        now: T0 + 1000,
        dueBefore: T0 + 1000,
        limit: 1000,
        leaseMs: 30_000,
        owner: "n",
        shards: mine,
        tenantShare: { max: 500, held: new Map() },
      });
      expect(claimed.map((j) => j.id).sort()).toEqual(ofMine.map((j) => j.id).sort());
      expect(new Set(claimed.map((j) => j.tenant))).toEqual(new Set(["a", "b"]));
    });

    it("reports the earliest due time of the given shards only", async () => {
      const jobs = await insertSpread(200);
      await t.store.bucketsStage({ until: T0 + HOUR, maxRows: 1_000_000 });
      expect((await t.store.jobsNextDue({ now: T0 })).earliestDue).toBe(T0);
      for (let shard = 0; shard < t.store.shardCount; shard++) {
        const dues = jobs.filter((j) => j.shard === shard).map((j) => j.dueAt);
        const got = await t.store.jobsNextDue({ now: T0, shards: [shard] });
        expect(got.earliestDue).toBe(dues.length > 0 ? Math.min(...dues) : null);
      }
      const every = [...Array(t.store.shardCount).keys()];
      expect((await t.store.jobsNextDue({ now: T0, shards: every })).earliestDue).toBe(T0);
      expect((await t.store.jobsNextDue({ now: T0, shards: [] })).earliestDue).toBeNull();
    });
  });
}
