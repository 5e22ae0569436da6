import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import { withNext, type Schedule } from "../../src/core/series.js";
import type { Store } from "../../src/store/store.js";
import { dailySeries, utcOccurrence, type SeriesOverrides } from "../support/series.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const DAY = 86_400_000;
const FIRST = Date.UTC(2026, 2, 2, 9);

/**
 * Recurring series in the store, part of the store contract (run by describeStoreContract):
 * a series and its pending occurrence are written together; the claim of the occurrence
 * advances the series once (a second claim of the same job after its lease ran out does
 * not); replace and delete check tenant, version and the pending occurrence.
 */
export function describeSeriesContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (series): ${name}`, () => {
    let store: Store;
    let newId: () => string;

    beforeEach(async () => {
      store = await makeStore();
      let t = T0;
      newId = createIdGenerator(() => t++);
    });
    afterEach(async () => {
      await store.close();
    });

    const series = (over: SeriesOverrides = {}): Schedule =>
      dailySeries(newId(), T0, { tenant: "owner", ...over });
    const first = utcOccurrence(FIRST);

    async function stored(over: SeriesOverrides = {}) {
      const w = withNext(series(over), first, newId, T0);
      const r = await store.schedulesInsert({ schedule: w.schedule, job: w.job, now: T0 });
      return { ...r, job: w.job! };
    }

    it("stores a series with its first occurrence; a held key returns the stored one", async () => {
      const { schedule, created, job } = await stored({ key: "k" });
      expect(created).toBe(true);
      expect(await store.scheduleGet({ id: schedule.id })).toEqual(schedule);
      expect(await store.scheduleGet({ id: schedule.id, tenant: "other" })).toBeNull();
      expect(await store.jobGet({ id: job.id })).toMatchObject({
        status: "pending",
        dueAt: FIRST,
        scheduleId: schedule.id,
        nominal: "2026-03-02T09:00:00",
      });
      const again = await stored({ key: "k" });
      expect(again).toMatchObject({ created: false, schedule: { id: schedule.id } });
      expect(await store.scheduleGetByKey({ tenant: "owner", key: "k" })).toEqual(schedule);
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 1 });
    });

    it("a claim advances the series once, in its transaction; a second claim of the job advances nothing", async () => {
      // the series' maxAttempts 3: the expired lease below puts the job back to be claimed
      const { schedule, job } = await stored();
      const claim = { now: FIRST, dueBefore: FIRST, limit: 10, leaseMs: 1000, owner: "n" };
      await store.bucketsStage({ until: FIRST, maxRows: 100 });
      const [claimed] = await store.jobsClaimDue(claim);
      expect(claimed?.id).toBe(job.id);
      const after = (await store.scheduleGet({ id: schedule.id }))!;
      expect(after).toMatchObject({
        firedCount: 1,
        nextAt: FIRST + DAY,
        lastJobId: job.id,
        nextNominal: "2026-03-03T09:00:00",
      });
      expect(await store.jobGet({ id: after.nextJobId! })).toMatchObject({
        status: "pending",
        dueAt: FIRST + DAY,
      });
      // the lease runs out; the same job is claimed again: the series does not move twice
      await store.leasesExpire({ now: FIRST + 2000, limit: 10 });
      const [again] = await store.jobsClaimDue({
        ...claim,
        now: FIRST + 3000,
        dueBefore: FIRST + 3000,
      });
      expect(again?.id).toBe(job.id);
      expect(await store.scheduleGet({ id: schedule.id })).toEqual(after);
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 1, claimed: 1 });
    });

    it("replace swaps the pending occurrence; tenant, version and a moved occurrence are checked", async () => {
      const { schedule, job } = await stored();
      const next = withNext(
        { ...schedule, version: 2 },
        { ...first, at: FIRST + 1000 },
        newId,
        T0 + 1,
      );
      const base = { id: schedule.id, schedule: next.schedule, job: next.job, now: T0 + 1 };
      expect(
        await store.scheduleReplace({ ...base, tenant: "other", expectedNextJobId: job.id }),
      ).toEqual({
        outcome: "not-found",
      });
      expect(
        await store.scheduleReplace({ ...base, expectedVersion: 5, expectedNextJobId: job.id }),
      ).toMatchObject({ outcome: "version-conflict" });
      expect(
        await store.scheduleReplace({ ...base, expectedNextJobId: "someone-else" }),
      ).toMatchObject({
        outcome: "moved",
      });
      expect(await store.jobGet({ id: job.id })).toMatchObject({ status: "pending" });
      const r = await store.scheduleReplace({
        ...base,
        expectedVersion: 1,
        expectedNextJobId: job.id,
      });
      expect(r).toMatchObject({ outcome: "changed", schedule: { version: 2 } });
      expect(await store.jobGet({ id: job.id })).toMatchObject({ status: "cancelled" });
      expect(await store.jobGet({ id: next.job!.id })).toMatchObject({
        status: "pending",
        dueAt: FIRST + 1000,
      });
      expect(await store.scheduleGet({ id: schedule.id })).toEqual(next.schedule);
    });

    it("a series the claim cannot advance ends with the reason; the rest of the claim stands", async () => {
      const good = await stored();
      // a stored rule that no longer compiles (written by an older version, or corrupted)
      const bad = await stored({ rule: { cron: "61 9 * * *" } });
      const plain: NewJob = { ...good.job, id: newId(), scheduleId: null, nominal: null };
      await store.jobsInsert({ jobs: [plain], now: T0 });
      await store.bucketsStage({ until: FIRST, maxRows: 100 });
      const claimed = await store.jobsClaimDue({
        now: FIRST,
        dueBefore: FIRST,
        limit: 10,
        leaseMs: 1000,
        owner: "n",
      });
      expect(claimed.map((j) => j.id).sort()).toEqual([good.job.id, bad.job.id, plain.id].sort());
      const ended = (await store.scheduleGet({ id: bad.schedule.id }))!;
      expect(ended).toMatchObject({
        state: "ended",
        nextJobId: null,
        nextAt: null,
        firedCount: 1,
        lastJobId: bad.job.id,
      });
      expect(ended.endedReason).toMatch(/^the series could not be advanced: .*cron/);
      expect(await store.scheduleGet({ id: good.schedule.id })).toMatchObject({
        state: "active",
        firedCount: 1,
        nextAt: FIRST + DAY,
        endedReason: null,
      });
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 1, claimed: 3 });
    });

    it("cancelling the pending occurrence skips it: the series goes on from the one after it", async () => {
      const { schedule, job } = await stored();
      const r = await store.jobCancel({ id: job.id, now: T0 + 5 });
      expect(r).toMatchObject({ outcome: "cancelled", job: { id: job.id } });
      const after = (await store.scheduleGet({ id: schedule.id }))!;
      expect(after).toMatchObject({
        state: "active",
        version: 2,
        firedCount: 0,
        nextAt: FIRST + DAY,
        nextNominal: "2026-03-03T09:00:00",
      });
      expect(after.nextJobId).not.toBe(job.id);
      expect(await store.jobGet({ id: after.nextJobId! })).toMatchObject({
        status: "pending",
        dueAt: FIRST + DAY,
        scheduleId: schedule.id,
        nominal: "2026-03-03T09:00:00",
      });
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 1, cancelled: 1 });
      // the occurrence after it fires and advances the series as any claim does
      await store.bucketsStage({ until: FIRST + DAY, maxRows: 100 });
      const claimed = await store.jobsClaimDue({
        now: FIRST + DAY,
        dueBefore: FIRST + DAY,
        limit: 10,
        leaseMs: 1000,
        owner: "n",
      });
      expect(claimed.map((j) => j.id)).toEqual([after.nextJobId]);
      expect(await store.scheduleGet({ id: schedule.id })).toMatchObject({
        firedCount: 1,
        nextAt: FIRST + 2 * DAY,
      });
    });

    it("cancelling the last occurrence ends the series; one that cannot be advanced ends with the reason", async () => {
      const last = await stored({ endAt: FIRST + 1000 });
      const bad = await stored({ rule: { cron: "61 9 * * *" } });
      expect(await store.jobCancel({ id: last.job.id, now: T0 })).toMatchObject({
        outcome: "cancelled",
      });
      expect(await store.jobCancel({ id: bad.job.id, now: T0 })).toMatchObject({
        outcome: "cancelled",
      });
      expect(await store.scheduleGet({ id: last.schedule.id })).toMatchObject({
        state: "ended",
        nextJobId: null,
        nextAt: null,
        firedCount: 0,
        endedReason: null,
      });
      const ended = (await store.scheduleGet({ id: bad.schedule.id }))!;
      expect(ended).toMatchObject({ state: "ended", nextJobId: null, firedCount: 0, version: 2 });
      expect(ended.endedReason).toMatch(/^the series could not be advanced: .*cron/);
      expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 0, cancelled: 2 });
    });

    it("delete cancels the pending occurrence; lists page by id, tenant and state", async () => {
      const a = await stored();
      const b = await stored({ tenant: "b" });
      const c = { schedule: series({ state: "paused" }) };
      await store.schedulesInsert({ schedule: c.schedule, job: null, now: T0 });
      expect((await store.schedulesList({ limit: 10 })).map((s) => s.id)).toEqual([
        a.schedule.id,
        b.schedule.id,
        c.schedule.id,
      ]);
      expect((await store.schedulesList({ limit: 10, tenant: "b" })).map((s) => s.id)).toEqual([
        b.schedule.id,
      ]);
      expect((await store.schedulesList({ limit: 10, state: "paused" })).map((s) => s.id)).toEqual([
        c.schedule.id,
      ]);
      expect(
        (await store.schedulesList({ limit: 1, afterId: a.schedule.id })).map((s) => s.id),
      ).toEqual([b.schedule.id]);
      expect(await store.scheduleDelete({ id: a.schedule.id, tenant: "b", now: T0 })).toEqual({
        outcome: "not-found",
      });
      expect(await store.scheduleDelete({ id: a.schedule.id, now: T0 })).toMatchObject({
        outcome: "deleted",
      });
      expect(await store.scheduleGet({ id: a.schedule.id })).toBeNull();
      expect(await store.jobGet({ id: a.job.id })).toMatchObject({ status: "cancelled" });
    });
  });
}
