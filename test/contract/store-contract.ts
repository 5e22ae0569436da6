import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bucketOf } from "../../src/core/buckets.js";
import { createIdGenerator } from "../../src/core/ids.js";
import type { Job, NewJob } from "../../src/core/job.js";
import type { Store } from "../../src/store/store.js";
import { describeCallbackContract } from "./callback-contract.js";
import { describeCapabilityContract } from "./capability-contract.js";
import { describeFeedContract } from "./feed-contract.js";
import { describeHeldContract } from "./held-contract.js";
import { describeKeyModeContract } from "./key-mode-contract.js";
import { describeOperationContract } from "./operation-contract.js";
import { describePauseContract } from "./pause-contract.js";
import { describePlacementContract } from "./placement-contract.js";
import { describeSeriesContract } from "./series-contract.js";
import { describeTagContract } from "./tag-contract.js";
import { describeTenantContract } from "./tenant-contract.js";
import { describeTraceContract } from "./trace-contract.js";

/** Epoch of the contract tests: 2026-03-01T10:00:00Z, inside an hour bucket's start. */
export const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

/**
 * The store contract: every store must pass it, against a real database, with a fresh
 * database (or schema) per test from `makeStore`. Stores are created with hour buckets and
 * several shards.
 */
export function describeStoreContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    let newId: () => string;
    let clockForIds = T0;

    beforeEach(async () => {
      store = await makeStore();
      clockForIds = T0;
      newId = createIdGenerator(() => clockForIds++);
    });
    afterEach(async () => {
      await store.close();
    });

    function job(over: Partial<NewJob> & { dueAt: number }): NewJob {
      const id = over.id ?? newId();
      return {
        id,
        tenant: "default",
        key: null,
        payload: { n: 1 },
        target: "t",
        targetOptions: null,
        maxAttempts: 3,
        expireAfterMs: null,
        ...over,
      };
    }

    async function insert(...jobs: NewJob[]): Promise<Job[]> {
      const r = await store.jobsInsert({ jobs, now: T0 });
      return r.map((x) => x.job);
    }

    /** Stage everything up to `until`, then claim. */
    async function claim(now: number, limit = 100, dueBefore = now): Promise<Job[]> {
      await store.bucketsStage({ until: dueBefore + HOUR, maxRows: 1_000_000 });
      return store.jobsClaimDue({ now, dueBefore, limit, leaseMs: 30_000, owner: "node-a" });
    }

    it("stores a job and reads it back whole", async () => {
      const [j] = await insert(
        job({ dueAt: T0 + 5000, key: "k1", payload: { hello: "world" }, tenant: "acme" }),
      );
      const got = await store.jobGet({ id: j!.id });
      expect(got).toMatchObject({
        id: j!.id,
        tenant: "acme",
        key: "k1",
        status: "pending",
        dueAt: T0 + 5000,
        bucket: T0,
        payload: { hello: "world" },
        attempts: 0,
        maxAttempts: 3,
        version: 1,
        fence: 0,
        createdAt: T0,
        finishedAt: null,
      });
      expect(await store.jobGet({ id: j!.id, tenant: "other" })).toBeNull();
      expect(await store.jobGet({ id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" })).toBeNull();
    });

    it("returns the live job for a repeated idempotency key, within a batch too", async () => {
      const first = await store.jobsInsert({
        jobs: [job({ dueAt: T0 + 1000, key: "same" })],
        now: T0,
      });
      const again = await store.jobsInsert({
        jobs: [
          job({ dueAt: T0 + 9000, key: "same" }),
          job({ dueAt: T0 + 5000, key: "b" }),
          job({ dueAt: T0 + 6000, key: "b" }),
        ],
        now: T0,
      });
      expect(first[0]!.created).toBe(true);
      expect(again[0]).toMatchObject({
        created: false,
        job: { id: first[0]!.job.id, dueAt: T0 + 1000 },
      });
      expect(again[1]!.created).toBe(true);
      expect(again[2]).toMatchObject({ created: false, job: { id: again[1]!.job.id } });
      // the same key in another tenant is another job
      const other = await store.jobsInsert({
        jobs: [job({ dueAt: T0, key: "same", tenant: "t2" })],
        now: T0,
      });
      expect(other[0]!.created).toBe(true);
      expect((await store.jobsCountByStatus({})).pending).toBe(3);
      // once the job finished, the key is free again
      await store.jobCancel({ id: first[0]!.job.id, now: T0 });
      const fresh = await store.jobsInsert({ jobs: [job({ dueAt: T0, key: "same" })], now: T0 });
      expect(fresh[0]!.created).toBe(true);
      expect(await store.jobGetByKey({ tenant: "default", key: "same" })).toMatchObject({
        id: fresh[0]!.job.id,
      });
    });

    it("inserts all or nothing", async () => {
      const a = job({ dueAt: T0 + 1000 });
      await expect(
        store.jobsInsert({ jobs: [a, job({ dueAt: T0 }), { ...a }], now: T0 }),
      ).rejects.toThrow();
      expect(await store.jobGet({ id: a.id })).toBeNull();
      const counts = await store.jobsCountByStatus({});
      expect(counts.pending).toBe(0);
      expect(await store.bucketsCounts({ from: 0, to: T0 + 10 * HOUR })).toEqual([]);
    });

    it("claims only due jobs, oldest first, bounded, with a lease and a fresh fence", async () => {
      const jobs = await insert(
        job({ dueAt: T0 + 3000 }),
        job({ dueAt: T0 + 1000 }),
        job({ dueAt: T0 + 2000 }),
        job({ dueAt: T0 + 10 * HOUR }),
      );
      const got = await claim(T0 + 5000, 2);
      expect(got.map((j) => j.dueAt)).toEqual([T0 + 1000, T0 + 2000]);
      for (const j of got) {
        expect(j).toMatchObject({
          status: "claimed",
          leaseOwner: "node-a",
          leaseExpiresAt: T0 + 5000 + 30_000,
          fence: 1,
          attempts: 1,
        });
      }
      const rest = await claim(T0 + 5000, 10);
      expect(rest.map((j) => j.id)).toEqual([jobs[0]!.id]);
      expect(await claim(T0 + 5000, 10)).toEqual([]);
      const counts = await store.jobsCountByStatus({});
      expect(counts).toMatchObject({ pending: 1, claimed: 3 });
    });

    it("shares a claim out per tenant: a tenant at its cap does not keep another's due job in the store", async () => {
      // a's 30 due jobs are all older than b's one
      const aJobs = await insert(
        ...Array.from({ length: 30 }, (_, i) => job({ tenant: "a", dueAt: T0 + 100 + i })),
      );
      const [bJob] = await insert(job({ tenant: "b", dueAt: T0 + 500 }));
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 1_000_000 });
      const base = { now: T0 + 1000, dueBefore: T0 + 1000, leaseMs: 30_000, owner: "node-a" };
      // a holds 15 of its 20: room for 5, its oldest; b's job in the same batch
      const first = await store.jobsClaimDue({
        ...base,
        limit: 10,
        tenantShare: { max: 20, held: new Map([["a", 15]]) },
      });
      expect(first.filter((j) => j.tenant === "a").map((j) => j.id)).toEqual(
        aJobs.slice(0, 5).map((j) => j.id),
      );
      expect(first.filter((j) => j.tenant === "b").map((j) => j.id)).toEqual([bJob!.id]);
      // a at its cap: nothing of a's, however much of it is due
      const full = await store.jobsClaimDue({
        ...base,
        limit: 10,
        tenantShare: { max: 20, held: new Map([["a", 20]]) },
      });
      expect(full).toEqual([]);
      // with room again, a continues oldest first; without a share the plain due prefix
      const next = await store.jobsClaimDue({ ...base, limit: 4 });
      expect(next.map((j) => j.id)).toEqual(aJobs.slice(5, 9).map((j) => j.id));
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 21, claimed: 10 });
    });

    it("rotates a shared claim through more tenants than one batch serves", async () => {
      const tenants = ["t1", "t2", "t3", "t4", "t5"];
      await insert(
        ...tenants.flatMap((tenant, i) =>
          [0, 1, 2].map((k) => job({ tenant, dueAt: T0 + 10 * k + i })),
        ),
      );
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 1_000_000 });
      const served: string[][] = [];
      for (let pass = 0; pass < 3; pass++) {
        const got = await store.jobsClaimDue({
          now: T0 + 1000,
          dueBefore: T0 + 1000,
          limit: 2,
          leaseMs: 30_000,
          owner: "node-a",
          // a cap below the batch: every claim is shared out, one job per tenant here
          tenantShare: { max: 1, held: new Map() },
        });
        served.push(got.map((j) => j.tenant).sort());
      }
      expect(served).toEqual([
        ["t1", "t2"],
        ["t3", "t4"],
        ["t1", "t5"],
      ]);
      // oldest first within a tenant
      const t1 = await store.jobsList({ tenant: "t1", statuses: ["claimed"], limit: 10 });
      expect(t1.map((j) => j.dueAt)).toEqual([T0, T0 + 10]);
    });

    it("claims jobs a few ms either side of a bucket boundary", async () => {
      const boundary = T0 + HOUR;
      const dues = [-3, -2, -1, 0, 1, 2, 3].map((d) => boundary + d);
      await insert(...dues.map((dueAt) => job({ dueAt })));
      expect(
        (await store.bucketsCounts({ from: 0, to: boundary + HOUR })).map((b) => [
          b.bucket,
          b.pending,
        ]),
      ).toEqual([
        [T0, 3],
        [boundary, 4],
      ]);
      const before = await claim(boundary - 1, 100);
      expect(before.map((j) => j.dueAt)).toEqual(dues.slice(0, 3));
      const after = await claim(boundary + 3, 100);
      expect(after.map((j) => j.dueAt)).toEqual(dues.slice(3));
    });

    it("stages a multi-day backlog in bounded steps and claims it oldest first", async () => {
      const dues: number[] = [];
      for (let h = 0; h < 72; h++)
        for (const m of [50, 10, 30]) dues.push(T0 + h * HOUR + m * 60_000);
      // insert newest first so insertion order differs from due order
      await insert(...[...dues].reverse().map((dueAt) => job({ dueAt })));
      const now = T0 + 73 * HOUR;
      let steps = 0;
      let staged = 0;
      for (;;) {
        const r = await store.bucketsStage({ until: now, maxRows: 50 });
        expect(r.rows).toBeLessThanOrEqual(50);
        if (!r.done && r.unstagedFrom !== null) expect(r.unstagedFrom % HOUR).toBe(0);
        if (r.done) expect(r.unstagedFrom).toBeNull();
        staged += r.rows;
        steps++;
        if (r.done) break;
      }
      // A store that stages (SQLite) stages all 216 rows, 50 at a time; a store that indexes
      // every pending job by due time (PostgreSQL) stages nothing and is done at once.
      if (staged > 0) {
        expect(staged).toBe(dues.length);
        expect(steps).toBeGreaterThanOrEqual(5);
      } else {
        expect(steps).toBe(1);
      }
      const fired: number[] = [];
      for (;;) {
        const batch = await store.jobsClaimDue({
          now,
          dueBefore: now,
          limit: 40,
          leaseMs: 1000,
          owner: "n",
        });
        if (batch.length === 0) break;
        fired.push(...batch.map((j) => j.dueAt));
      }
      expect(fired).toEqual([...dues].sort((a, b) => a - b));
    });

    it("ignores a settlement carrying a stale fencing token", async () => {
      const [j] = await insert(job({ dueAt: T0 }));
      const [first] = await claim(T0);
      // the lease runs out and another worker claims it again
      expect(await store.leasesExpire({ now: T0 + 31_000, limit: 10 })).toEqual({
        requeued: 1,
        dead: 0,
        nextExpiresAt: null,
      });
      const [second] = await claim(T0 + 31_000);
      expect(second!.fence).toBe(first!.fence + 1);
      const stale = await store.jobsSettle({
        now: T0 + 32_000,
        settlements: [
          { id: j!.id, fence: first!.fence, firedAt: T0, outcome: "succeeded", result: null },
        ],
      });
      expect(stale).toEqual([false]);
      expect((await store.jobGet({ id: j!.id }))!.status).toBe("claimed");
      const fresh = await store.jobsSettle({
        now: T0 + 32_000,
        settlements: [
          {
            id: j!.id,
            fence: second!.fence,
            firedAt: T0 + 31_000,
            outcome: "succeeded",
            result: { ok: true },
          },
        ],
      });
      expect(fresh).toEqual([true]);
      expect(await store.jobGet({ id: j!.id })).toMatchObject({
        status: "succeeded",
        lastResult: { ok: true },
        finishedAt: T0 + 32_000,
        firedAt: T0 + 31_000,
        leaseOwner: null,
        attempts: 2,
      });
    });

    it("retries with a new due time, then records dead with the last error", async () => {
      const [j] = await insert(job({ dueAt: T0, maxAttempts: 2 }));
      const [c1] = await claim(T0);
      const retryAt = T0 + 5000;
      await store.jobsSettle({
        now: T0 + 10,
        settlements: [
          {
            id: j!.id,
            fence: c1!.fence,
            firedAt: T0,
            outcome: "retry",
            error: "boom 1",
            retryAt,
          },
        ],
      });
      expect(await store.jobGet({ id: j!.id })).toMatchObject({
        status: "pending",
        dueAt: retryAt,
        lastError: "boom 1",
        attempts: 1,
      });
      expect(await claim(T0 + 4999)).toEqual([]);
      const [c2] = await claim(retryAt);
      expect(c2).toMatchObject({ id: j!.id, attempts: 2 });
      await store.jobsSettle({
        now: retryAt + 1,
        settlements: [
          { id: j!.id, fence: c2!.fence, firedAt: retryAt, outcome: "dead", error: "boom 2" },
        ],
      });
      expect(await store.jobGet({ id: j!.id })).toMatchObject({
        status: "dead",
        lastError: "boom 2",
        finishedAt: retryAt + 1,
      });
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 0, claimed: 0, dead: 1 });
    });

    it("records expired jobs and releases unstarted claims without counting the attempt", async () => {
      const [a, b] = await insert(job({ dueAt: T0, expireAfterMs: 10 }), job({ dueAt: T0 }));
      const claimed = await claim(T0 + 100);
      const fa = claimed.find((c) => c.id === a!.id)!;
      const fb = claimed.find((c) => c.id === b!.id)!;
      const applied = await store.jobsSettle({
        now: T0 + 100,
        settlements: [
          { id: a!.id, fence: fa.fence, firedAt: T0 + 100, outcome: "expired", error: "too late" },
          { id: b!.id, fence: fb.fence, firedAt: T0 + 100, outcome: "release" },
        ],
      });
      expect(applied).toEqual([true, true]);
      expect(await store.jobGet({ id: a!.id })).toMatchObject({
        status: "expired",
        lastError: "too late",
      });
      expect(await store.jobGet({ id: b!.id })).toMatchObject({ status: "pending", attempts: 0 });
      expect((await claim(T0 + 200)).map((j) => j.id)).toEqual([b!.id]);
    });

    it("releases a claim to a later due time with its error, the attempt not counted", async () => {
      // An infrastructure failure (the handler's dependency was down): not an attempt, even
      // on the job's last one, and the job comes back at its retry time only.
      const [j] = await insert(job({ dueAt: T0, maxAttempts: 1 }));
      const [c] = await claim(T0 + 10);
      expect(c).toMatchObject({ id: j!.id, attempts: 1, status: "claimed" });
      const retryAt = T0 + 2 * HOUR + 5;
      const applied = await store.jobsSettle({
        now: T0 + 20,
        settlements: [
          {
            id: j!.id,
            fence: c!.fence,
            firedAt: T0 + 10,
            outcome: "release",
            retryAt,
            error: "signing secret unavailable: database error (ECONNREFUSED)",
          },
        ],
      });
      expect(applied).toEqual([true]);
      expect(await store.jobGet({ id: j!.id })).toMatchObject({
        status: "pending",
        attempts: 0,
        dueAt: retryAt,
        bucket: bucketOf(retryAt, store.bucketWidthMs),
        lastError: "signing secret unavailable: database error (ECONNREFUSED)",
      });
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 1, claimed: 0 });
      expect(await claim(retryAt - 1)).toEqual([]);
      const [again] = await claim(retryAt);
      expect(again).toMatchObject({ id: j!.id, attempts: 1 });
      expect(again!.fence).toBeGreaterThan(c!.fence);
      // A stale release (the old fence) changes nothing.
      expect(
        await store.jobsSettle({
          now: retryAt + 1,
          settlements: [{ id: j!.id, fence: c!.fence, firedAt: T0, outcome: "release" }],
        }),
      ).toEqual([false]);
    });

    it("expires leases: back to pending while attempts remain, dead after", async () => {
      const [a, b] = await insert(
        job({ dueAt: T0, maxAttempts: 1 }),
        job({ dueAt: T0 + 1, maxAttempts: 5 }),
      );
      await claim(T0 + 1);
      expect(await store.leasesExpire({ now: T0 + 1000, limit: 10 })).toEqual({
        requeued: 0,
        dead: 0,
        nextExpiresAt: T0 + 1 + 30_000,
      });
      expect(await store.leasesExpire({ now: T0 + 31_001, limit: 10 })).toEqual({
        requeued: 1,
        dead: 1,
        nextExpiresAt: null,
      });
      expect(await store.jobGet({ id: a!.id })).toMatchObject({ status: "dead" });
      expect(await store.jobGet({ id: b!.id })).toMatchObject({ status: "pending", dueAt: T0 + 1 });
      expect((await claim(T0 + 31_002)).map((j) => j.id)).toEqual([b!.id]);
    });

    /** Stage everything, then claim every job due by `now` for `owner`. */
    async function claimAs(owner: string, now: number, limit = 1): Promise<Job[]> {
      await store.bucketsStage({ until: now + HOUR, maxRows: 1_000_000 });
      return store.jobsClaimDue({ now, dueBefore: now, limit, leaseMs: 30_000, owner });
    }

    it("renews every lease of one owner in one call, and no other owner's", async () => {
      const [a, b, c] = await insert(
        job({ dueAt: T0 }),
        job({ dueAt: T0 + 1 }),
        job({ dueAt: T0 + 2 }),
      );
      await claimAs("n/1", T0 + 1, 2); // a and b, leases until T0 + 30,001
      await claimAs("m/1", T0 + 2); // c
      expect(await store.leasesRenew({ owner: "n/1", now: T0 + 20_000, leaseMs: 30_000 })).toBe(2);
      expect(await store.leasesRenew({ owner: "nobody", now: T0 + 20_000, leaseMs: 1 })).toBe(0);
      expect(await store.jobGet({ id: a!.id })).toMatchObject({
        status: "claimed",
        leaseOwner: "n/1",
        leaseExpiresAt: T0 + 50_000,
      });
      // only the unrenewed claim runs out at the old expiry; the sweep reads the renewed one
      expect(await store.leasesExpire({ now: T0 + 31_000, limit: 10 })).toEqual({
        requeued: 1,
        dead: 0,
        nextExpiresAt: T0 + 50_000,
      });
      expect((await store.jobGet({ id: c!.id }))!.status).toBe("pending");
      expect((await store.jobGet({ id: b!.id }))!.status).toBe("claimed");
    });

    it("releases stale claims of its earlier incarnations only, the attempt not counted", async () => {
      const [old, live, other, mine] = await insert(
        job({ dueAt: T0 }),
        job({ dueAt: T0 + 1 }),
        job({ dueAt: T0 + 2 }),
        job({ dueAt: T0 + 3 }),
      );
      const [claimedOld] = await claimAs("n/old", T0); // lease until T0 + 30 s, never renewed
      await claimAs("n/live", T0 + 1);
      await claimAs("nx/old", T0 + 2); // another node whose name merely starts alike
      await claimAs("n/me", T0 + 3);
      // n/live renews: its lease now ends later than a stopped heartbeat's would
      await store.leasesRenew({ owner: "n/live", now: T0 + 5000, leaseMs: 30_000 });
      const params = { ownerPrefix: "n/", exceptOwner: "n/me", now: T0 + 6000, limit: 10 };
      expect(await store.leasesReleaseStale({ ...params, expiresBy: T0 + 29_999 })).toBe(0);
      expect(await store.leasesReleaseStale({ ...params, expiresBy: T0 + 30_003 })).toBe(1);
      expect(await store.jobGet({ id: old!.id })).toMatchObject({
        status: "pending",
        attempts: 0,
        dueAt: T0,
        fence: claimedOld!.fence,
        leaseOwner: null,
      });
      for (const j of [live!, other!, mine!]) {
        expect((await store.jobGet({ id: j.id }))!.status).toBe("claimed");
      }
      expect(await store.leasesReleaseStale({ ...params, expiresBy: T0 + 30_003 })).toBe(0);
      const [again] = await claimAs("n/me", T0 + 6000);
      expect(again).toMatchObject({ id: old!.id, attempts: 1, fence: claimedOld!.fence + 1 });
    });

    it("gives cancel a definite outcome", async () => {
      const [p, c, f] = await insert(
        job({ dueAt: T0 + HOUR }),
        job({ dueAt: T0 }),
        job({ dueAt: T0 + 1 }),
      );
      const claimed = await claim(T0 + 1);
      const fj = claimed.find((x) => x.id === f!.id)!;
      await store.jobsSettle({
        now: T0 + 2,
        settlements: [
          { id: f!.id, fence: fj.fence, firedAt: T0 + 1, outcome: "succeeded", result: null },
        ],
      });
      expect(await store.jobCancel({ id: p!.id, tenant: "someone-else", now: T0 })).toEqual({
        outcome: "not-found",
      });
      const r1 = await store.jobCancel({ id: p!.id, now: T0 + 3 });
      expect(r1).toMatchObject({
        outcome: "cancelled",
        job: { status: "cancelled", finishedAt: T0 + 3 },
      });
      expect(await store.jobCancel({ id: p!.id, now: T0 + 4 })).toMatchObject({
        outcome: "too-late",
        job: { status: "cancelled" },
      });
      expect(await store.jobCancel({ id: c!.id, now: T0 + 4 })).toMatchObject({
        outcome: "too-late",
        job: { status: "claimed" },
      });
      expect(await store.jobCancel({ id: f!.id, now: T0 + 4 })).toMatchObject({
        outcome: "too-late",
        job: { status: "succeeded" },
      });
      expect(await store.jobCancel({ id: "01ARZ3NDEKTSV4RRFFQ69G5FAV", now: T0 })).toEqual({
        outcome: "not-found",
      });
      // a cancelled job never fires
      expect(await claim(T0 + 2 * HOUR)).toEqual([]);
      expect(await store.bucketsCounts({ from: 0, to: T0 + 5 * HOUR })).toEqual([]);
    });

    it("reschedules a pending job, honouring the expected version", async () => {
      const [j] = await insert(job({ dueAt: T0 + 1000 }));
      const newDue = T0 + 3 * HOUR + 5;
      const conflict = await store.jobReschedule({
        id: j!.id,
        dueAt: newDue,
        expectedVersion: 7,
        now: T0,
      });
      expect(conflict).toMatchObject({
        outcome: "version-conflict",
        job: { version: 1, dueAt: T0 + 1000 },
      });
      const ok = await store.jobReschedule({
        id: j!.id,
        dueAt: newDue,
        expectedVersion: 1,
        now: T0 + 1,
      });
      expect(ok).toMatchObject({
        outcome: "rescheduled",
        job: { dueAt: newDue, bucket: T0 + 3 * HOUR, version: 2 },
      });
      expect(await claim(T0 + 2000)).toEqual([]);
      expect(
        (await store.bucketsCounts({ from: 0, to: T0 + 5 * HOUR })).map((b) => [
          b.bucket,
          b.pending,
        ]),
      ).toEqual([[T0 + 3 * HOUR, 1]]);
      const [c] = await claim(newDue);
      expect(c!.id).toBe(j!.id);
      expect(await store.jobReschedule({ id: j!.id, dueAt: T0, now: T0 })).toMatchObject({
        outcome: "too-late",
      });
      expect(await store.jobReschedule({ id: j!.id, tenant: "x", dueAt: T0, now: T0 })).toEqual({
        outcome: "not-found",
      });
    });

    it("reschedules into an already staged bucket and fires at the new time", async () => {
      const [j] = await insert(job({ dueAt: T0 + 5 * HOUR }));
      await store.bucketsStage({ until: T0 + 10, maxRows: 100 });
      await store.jobReschedule({ id: j!.id, dueAt: T0 + 20, now: T0 });
      expect(
        (
          await store.jobsClaimDue({
            now: T0 + 20,
            dueBefore: T0 + 20,
            limit: 10,
            leaseMs: 1000,
            owner: "n",
          })
        ).map((x) => x.id),
      ).toEqual([j!.id]);
    });

    it("retries a dead job with a fresh attempt budget", async () => {
      const [j] = await insert(job({ dueAt: T0, maxAttempts: 1 }));
      const [c] = await claim(T0);
      await store.jobsSettle({
        now: T0,
        settlements: [{ id: j!.id, fence: c!.fence, firedAt: T0, outcome: "dead", error: "x" }],
      });
      const r = await store.jobRetry({ id: j!.id, dueAt: T0 + 10, now: T0 + 5 });
      expect(r).toMatchObject({
        outcome: "rescheduled",
        job: { status: "pending", attempts: 0, finishedAt: null },
      });
      expect(await store.jobRetry({ id: j!.id, dueAt: T0, now: T0 })).toMatchObject({
        outcome: "too-late",
      });
      expect((await claim(T0 + 10)).map((x) => x.id)).toEqual([j!.id]);
    });

    it("refuses to retry a dead job whose idempotency key another live job now holds", async () => {
      const [j] = await insert(job({ dueAt: T0, maxAttempts: 1, key: "once" }));
      const [c] = await claim(T0);
      await store.jobsSettle({
        now: T0,
        settlements: [{ id: j!.id, fence: c!.fence, firedAt: T0, outcome: "dead", error: "x" }],
      });
      const [holder] = await insert(job({ dueAt: T0 + 5, key: "once" }));
      expect(holder!.id).not.toBe(j!.id);
      const r = await store.jobRetry({ id: j!.id, dueAt: T0 + 10, now: T0 + 5 });
      expect(r).toMatchObject({
        outcome: "key-conflict",
        job: { id: j!.id, status: "dead" },
        holder: { id: holder!.id },
      });
      expect(await store.jobGet({ id: j!.id })).toMatchObject({ status: "dead" });
    });

    it("keeps per-bucket counters and status counts without counting rows", async () => {
      await insert(
        job({ dueAt: T0 + 10 }),
        job({ dueAt: T0 + 20, tenant: "b" }),
        job({ dueAt: T0 + HOUR + 1 }),
        job({ dueAt: T0 + 5 * HOUR }),
        job({ dueAt: T0 + 5 * HOUR + 7, tenant: "b" }),
      );
      const all = await store.bucketsCounts({ from: 0, to: T0 + 24 * HOUR });
      expect(all.map((b) => [b.bucket, b.pending])).toEqual([
        [T0, 2],
        [T0 + HOUR, 1],
        [T0 + 5 * HOUR, 2],
      ]);
      const b = await store.bucketsCounts({ from: 0, to: T0 + 24 * HOUR, tenant: "b" });
      expect(b.map((x) => [x.bucket, x.pending])).toEqual([
        [T0, 1],
        [T0 + 5 * HOUR, 1],
      ]);
      expect((await store.bucketsCounts({ from: T0 + HOUR, to: T0 + 2 * HOUR })).length).toBe(1);
      await claim(T0 + 15);
      expect((await store.bucketsCounts({ from: 0, to: T0 + HOUR }))[0]!.pending).toBe(1);
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 4, claimed: 1 });
      expect(await store.jobsCountByStatus({ tenant: "b" })).toMatchObject({
        pending: 2,
        claimed: 0,
      });
    });

    it("lists by status and due range in due order, paged by cursor without gaps or repeats", async () => {
      const dues: number[] = [];
      for (let i = 0; i < 30; i++) dues.push(T0 + ((i * 7919) % 30) * 20 * 60_000 + i);
      await insert(
        ...dues.map((dueAt, i) => job({ dueAt, tenant: i % 3 === 0 ? "other" : "default" })),
      );
      await claim(T0 + 20 * 60_000 + 100, 2);
      const seen: Job[] = [];
      let after: { dueAt: number; id: string } | undefined;
      for (;;) {
        const page = await store.jobsList({
          limit: 7,
          tenant: "default",
          ...(after ? { after } : {}),
        });
        seen.push(...page);
        if (page.length < 7) break;
        const last = page[page.length - 1]!;
        after = { dueAt: last.dueAt, id: last.id };
      }
      expect(seen.length).toBe(20);
      expect(new Set(seen.map((j) => j.id)).size).toBe(20);
      const keys = seen.map((j) => [j.dueAt, j.id] as const);
      expect(keys).toEqual([...keys].sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : 1)));
      expect(seen.every((j) => j.tenant === "default")).toBe(true);

      const claimed = await store.jobsList({ limit: 100, statuses: ["claimed"] });
      expect(claimed.length).toBe(2);
      const ranged = await store.jobsList({
        limit: 100,
        statuses: ["pending"],
        dueFrom: T0 + HOUR,
        dueTo: T0 + 3 * HOUR,
      });
      expect(ranged.length).toBeGreaterThan(0);
      expect(
        ranged.every(
          (j) => j.dueAt >= T0 + HOUR && j.dueAt < T0 + 3 * HOUR && j.status === "pending",
        ),
      ).toBe(true);
      expect(ranged.length).toBe(dues.filter((d) => d >= T0 + HOUR && d < T0 + 3 * HOUR).length);
      await store.jobCancel({ id: ranged[0]!.id, now: T0 });
      expect(
        (await store.jobsList({ limit: 100, statuses: ["cancelled"] })).map((j) => j.id),
      ).toEqual([ranged[0]!.id]);
    });

    it("reports the earliest due time and the next bucket to stage", async () => {
      expect(await store.jobsNextDue({ now: T0 })).toEqual({
        earliestDue: null,
        nextUnstagedBucket: null,
      });
      await insert(job({ dueAt: T0 + 2 * HOUR + 5 }), job({ dueAt: T0 + 500 }));
      await store.bucketsStage({ until: T0, maxRows: 100 });
      const next = await store.jobsNextDue({ now: T0 });
      expect(next.earliestDue).toBe(T0 + 500);
      if (next.nextUnstagedBucket !== null) expect(next.nextUnstagedBucket).toBe(T0 + 2 * HOUR);
    });

    it("purges history older than the cutoff, in bounded batches, and nothing live", async () => {
      const jobs = await insert(...Array.from({ length: 5 }, (_, i) => job({ dueAt: T0 + i })));
      const claimed = await claim(T0 + 10, 3);
      await store.jobsSettle({
        now: T0 + 100,
        settlements: claimed.map((c) => ({
          id: c.id,
          fence: c.fence,
          firedAt: T0,
          outcome: "succeeded" as const,
          result: null,
        })),
      });
      await store.jobCancel({ id: jobs[4]!.id, now: T0 + 5000 });
      expect(await store.historyPurge({ before: T0 + 50, limit: 10 })).toBe(0);
      let purged = 0;
      for (let n = -1; n !== 0;) {
        n = await store.historyPurge({ before: T0 + 1000, limit: 2 });
        purged += n;
      }
      expect(purged).toBe(3);
      const counts = await store.jobsCountByStatus({});
      expect(counts).toMatchObject({ succeeded: 0, cancelled: 1, pending: 1 });
      expect(await store.jobGet({ id: jobs[3]!.id })).toMatchObject({ status: "pending" });
    });
  });
  describeTenantContract(name, makeStore);
  describeKeyModeContract(name, makeStore);
  describePlacementContract(name, makeStore);
  describeCapabilityContract(name, makeStore);
  describeTraceContract(name, makeStore);
  describeFeedContract(name, makeStore);
  describeSeriesContract(name, makeStore);
  describeOperationContract(name, makeStore);
  describeTagContract(name, makeStore);
  describePauseContract(name, makeStore);
  describeHeldContract(name, makeStore);
  describeCallbackContract(name, makeStore);
}
