import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PartitionMaintenance } from "../../src/stores/postgres/partition-maintenance.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { fireAll, insertAll, jobMaker } from "./helpers.js";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 3, 10); // a day bucket's start

const pg = usePostgresServer();

describe("postgres partitions", () => {
  let store: PostgresStore;
  beforeEach(async () => {
    store = await PostgresStore.open({
      url: pg.url,
      schema: freshSchema("parts"),
      onDemandAheadMs: 30 * DAY,
    });
  });
  afterEach(async () => {
    await store.close();
  });

  const liveStarts = async () => (await store.partitions.list("jobs_live")).map((p) => p.from);
  const defaultRows = async () =>
    Number(
      (
        await store.connection.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "${store.schema}".jobs_live_default`,
        )
      ).rows[0]!.n,
    );

  it("creates partitions ahead, one per bucket, and history periods", async () => {
    const m = new PartitionMaintenance(store.context, { aheadBuckets: 5 });
    const r = await m.runOnce(T0 + 3 * HOUR);
    expect(r.created).toBe(6 + 3);
    expect(await liveStarts()).toEqual([0, 1, 2, 3, 4, 5].map((i) => T0 + i * DAY));
    expect((await store.partitions.list("jobs_history")).map((p) => p.from)).toEqual([
      T0,
      T0 + DAY,
      T0 + 2 * DAY,
    ]);
    expect((await m.runOnce(T0 + 4 * HOUR)).created).toBe(0); // idempotent
  });

  it("lands far-future jobs in the default partition and moves them into their partition when it is made", async () => {
    const job = jobMaker(T0);
    const far = [job(T0 + 100 * DAY + 5), job(T0 + 100 * DAY + 6), job(T0 + 101 * DAY)];
    await store.jobsInsert({ jobs: far, now: T0 });
    expect(await defaultRows()).toBe(3);
    // time passes: maintenance reaches day 100
    const m = new PartitionMaintenance(store.context, { aheadBuckets: 1 });
    await m.runOnce(T0 + 99 * DAY);
    expect(await defaultRows()).toBe(1); // day 101 is not created yet
    expect((await store.partitions.list("jobs_live")).map((p) => p.from)).toContain(T0 + 100 * DAY);
    // counters did not move (the jobs only changed partition) and the jobs still fire
    expect(
      (await store.bucketsCounts({ from: T0, to: T0 + 200 * DAY })).map((b) => [
        b.bucket,
        b.pending,
      ]),
    ).toEqual([
      [T0 + 100 * DAY, 2],
      [T0 + 101 * DAY, 1],
    ]);
    expect(await fireAll(store, T0 + 101 * DAY)).toBe(3);
  });

  it("drops empty past partitions, keeps ones with work, and never loses a job requeued into a dropped range", async () => {
    const job = jobMaker(T0);
    const [a, b] = [job(T0 + 10), job(T0 + DAY + 10)];
    await store.jobsInsert({ jobs: [a!, b!], now: T0 });
    const m = new PartitionMaintenance(store.context, { aheadBuckets: 1, dropAfterBuckets: 1 });
    await m.runOnce(T0);
    // day 0's job is claimed (it leaves jobs_live); day 1's job stays pending
    const [claimed] = await store.jobsClaimDue({
      now: T0 + 20,
      dueBefore: T0 + 20,
      limit: 1,
      leaseMs: 1000,
      owner: "n",
    });
    expect(claimed!.id).toBe(a!.id);
    const r = await m.runOnce(T0 + 3 * DAY);
    expect(r.dropped).toEqual([`jobs_live_p${T0}`]);
    expect(await liveStarts()).not.toContain(T0);
    expect(await liveStarts()).toContain(T0 + DAY); // still holds b
    // the claim's lease runs out: the job goes back to pending into the default partition
    expect(await store.leasesExpire({ now: T0 + 3 * DAY, limit: 10 })).toEqual({
      requeued: 1,
      dead: 0,
      nextExpiresAt: null,
    });
    expect(await defaultRows()).toBe(1);
    const next = await store.jobsNextDue({ now: T0 + 3 * DAY });
    expect(next.earliestDue).toBe(T0 + 10);
    expect(await fireAll(store, T0 + 3 * DAY)).toBe(2);
    await m.runOnce(T0 + 3 * DAY);
    expect((await liveStarts()).filter((s) => s < T0 + 2 * DAY)).toEqual([]);
  });

  it("purges history by dropping whole partitions, and the rest row by row", async () => {
    const job = jobMaker(T0);
    await insertAll(store, [job(T0), job(T0 + 1), job(T0 + 2)], T0);
    const ids: string[] = [];
    for (const [i, day] of [0, 1, 2].entries()) {
      const now = T0 + day * DAY + 1000;
      const [c] = await store.jobsClaimDue({
        now,
        dueBefore: now,
        limit: 1,
        leaseMs: 1000,
        owner: "n",
      });
      ids.push(c!.id);
      await store.jobsSettle({
        now,
        settlements: [
          { id: c!.id, fence: c!.fence, firedAt: now, outcome: "succeeded", result: i },
        ],
      });
    }
    expect((await store.partitions.list("jobs_history")).map((p) => p.from)).toEqual([
      T0,
      T0 + DAY,
      T0 + 2 * DAY,
    ]);
    // before day 2 + 500 ms: days 0 and 1 go as whole partitions; day 2's row finished later
    expect(await store.historyPurge({ before: T0 + 2 * DAY + 500, limit: 100 })).toBe(2);
    expect((await store.partitions.list("jobs_history")).map((p) => p.from)).toEqual([
      T0 + 2 * DAY,
    ]);
    expect(await store.jobGet({ id: ids[0]! })).toBeNull();
    expect(await store.jobGet({ id: ids[2]! })).toMatchObject({
      status: "succeeded",
      lastResult: 2,
    });
    expect((await store.jobsCountByStatus({})).succeeded).toBe(1);
    expect(await store.historyPurge({ before: T0 + 2 * DAY + 5000, limit: 100 })).toBe(1);
    expect((await store.jobsCountByStatus({})).succeeded).toBe(0);
  });

  it("returns the live table to its starting size after its jobs have fired", async () => {
    const m = new PartitionMaintenance(store.context, { aheadBuckets: 3 });
    await m.runOnce(T0);
    const size = async () =>
      Number(
        (
          await store.connection.query<{ bytes: number }>(
            `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = '"${store.schema}".jobs_live'::regclass`,
          )
        ).rows[0]!.bytes,
      );
    const start = await size();
    const job = jobMaker(T0);
    await insertAll(
      store,
      Array.from({ length: 30_000 }, (_, i) => job(T0 + Math.floor((i / 30_000) * 2 * DAY))),
      T0,
    );
    const full = await size();
    expect(full).toBeGreaterThan(start + 2_000_000);
    expect(await fireAll(store, T0 + 2 * DAY)).toBe(30_000);
    await m.runOnce(T0 + 3 * DAY);
    // days 0 and 1 are dropped; what is left is empty partitions (day 2, kept one bucket
    // longer, and the ones ahead): about the starting size, one empty partition more
    const parts = (await store.partitions.list("jobs_live")).length;
    expect(parts).toBe(5);
    expect(await size()).toBeLessThanOrEqual((start / 4) * parts);
  });
});
