import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { shardOf } from "../../src/core/ids.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { jobMaker } from "./helpers.js";
import { assignShards, ShardLeases } from "../../src/stores/postgres/shard-leases.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const T0 = Date.UTC(2026, 5, 1, 8, 0, 0);
const HB = 1000;
const TTL = 3000;

const pg = usePostgresServer();

describe("assignShards", () => {
  it("is balanced and moves few shards when a node joins or leaves", () => {
    const three = assignShards(["a", "b", "c"], 64);
    const sizes = [...three.values()].map((l) => l.length);
    expect(sizes.reduce((x, y) => x + y, 0)).toBe(64);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(22);
    const four = assignShards(["a", "b", "c", "d"], 64);
    const owner = (m: Map<string, number[]>, s: number) =>
      [...m.entries()].find(([, l]) => l.includes(s))![0];
    let moved = 0;
    for (let s = 0; s < 64; s++) if (owner(three, s) !== owner(four, s)) moved++;
    expect(moved).toBeLessThan(32); // a modulo assignment would move ~48
  });
});

describe("shard leases", () => {
  let store: PostgresStore;
  beforeEach(async () => {
    await store?.close();
    store = await PostgresStore.open({
      url: pg.url,
      schema: freshSchema("leases"),
      shardCount: 24,
    });
  });
  afterAll(async () => {
    await store?.close();
  });

  const node = (id: string) =>
    new ShardLeases(store.context, { nodeId: id, heartbeatMs: HB, ttlMs: TTL });

  function expectPartition(owned: (readonly number[])[], shardCount: number) {
    const all = owned.flat();
    expect(new Set(all).size).toBe(all.length); // disjoint
    expect([...all].sort((a, b) => a - b)).toEqual([...Array(shardCount).keys()]);
  }

  it("gives one node every shard, then rebalances as nodes join within two heartbeats", async () => {
    const [a, b, c] = [node("a"), node("b"), node("c")];
    expect((await a.runOnce(T0)).owned.length).toBe(24);
    // b and c join: a still holds everything, so they get nothing yet
    expect((await b.runOnce(T0 + 10)).owned).toEqual([]);
    expect((await c.runOnce(T0 + 20)).owned).toEqual([]);
    // a's next heartbeat releases what the new assignment gives the others
    const ra = await a.runOnce(T0 + HB);
    expect(ra.released.length).toBe(16);
    expect(ra.nodes).toEqual(["a", "b", "c"]);
    // their next heartbeats take it
    await b.runOnce(T0 + HB + 10);
    await c.runOnce(T0 + HB + 20);
    expectPartition([a.owned(T0 + HB + 30), b.owned(T0 + HB + 30), c.owned(T0 + HB + 30)], 24);
    for (const n of [a, b, c]) expect(n.owned(T0 + HB + 30).length).toBe(8);
  });

  it("adopts a dead node's shards after its lease runs out, not before", async () => {
    const [a, b, c] = [node("a"), node("b"), node("c")];
    for (let round = 0; round < 3; round++) {
      for (const n of [a, b, c]) await n.runOnce(T0 + round * HB);
    }
    const cShards = c.owned(T0 + 2 * HB);
    expect(cShards.length).toBe(8);
    // c dies (no more heartbeats). Before its ttl runs out, nobody takes its shards.
    let t = T0 + 3 * HB;
    await a.runOnce(t);
    await b.runOnce(t);
    expect([...a.owned(t), ...b.owned(t)].some((s) => cShards.includes(s))).toBe(false);
    // c's node row and leases expire TTL after its last heartbeat (T0 + 2 HB)
    t = T0 + 2 * HB + TTL + 1;
    const ra = await a.runOnce(t);
    const rb = await b.runOnce(t);
    expect(ra.nodes).toEqual(["a", "b"]);
    expectPartition([ra.owned, rb.owned], 24);
    expect(c.owned(t)).toEqual([]); // c itself no longer trusts its stale leases
  });

  it("without the liveness locks serves a dead node's shards again within ttl + a heartbeat", async () => {
    // heartbeats alone (no start(): no liveness lock), at a 1 s beat and the default ttl
    const [a, b, c] = ["a", "b", "c"].map(
      (id) => new ShardLeases(store.context, { nodeId: id, heartbeatMs: 1000 }),
    ) as [ShardLeases, ShardLeases, ShardLeases];
    const beat = 1000; // each heartbeat waits 0.9 to 1.1 of it
    for (let round = 0; round < 3; round++) {
      for (const n of [a, b, c]) await n.runOnce(T0 + round * beat);
    }
    const lastBeatOfC = T0 + 2 * beat;
    // c dies; a and b beat on, at the slowest jittered pace
    let adoptedAt: number | null = null;
    for (let t = lastBeatOfC + 1.1 * beat; t <= lastBeatOfC + 10_000; t += 1.1 * beat) {
      await a.runOnce(Math.round(t));
      await b.runOnce(Math.round(t) + 5);
      const served = new Set([...a.owned(Math.round(t) + 5), ...b.owned(Math.round(t) + 5)]);
      if (served.size === 24) {
        adoptedAt = Math.round(t) + 5;
        break;
      }
    }
    expect(adoptedAt).not.toBeNull();
    expect(adoptedAt! - lastBeatOfC).toBeLessThanOrEqual(5000);
  });

  it("hands every shard back on stop", async () => {
    const [a, b] = [node("a"), node("b")];
    for (let round = 0; round < 2; round++) {
      await a.runOnce(T0 + round * HB);
      await b.runOnce(T0 + round * HB);
    }
    expect(a.owned(T0 + HB).length).toBe(12);
    await b.stop();
    const r = await a.runOnce(T0 + 2 * HB);
    expect(r.owned.length).toBe(24);
    expect(r.nodes).toEqual(["a"]);
  });

  it("claims only jobs of the shards a node owns", async () => {
    const job = jobMaker(T0);
    const jobs = Array.from({ length: 200 }, () => job(T0, { maxAttempts: 1 }));
    await store.jobsInsert({ jobs, now: T0 });
    const [a, b] = [node("a"), node("b")];
    for (let round = 0; round < 2; round++) {
      await a.runOnce(T0 + round * HB);
      await b.runOnce(T0 + round * HB);
    }
    const claimA = await store.jobsClaimDue({
      now: T0 + HB,
      dueBefore: T0 + HB,
      limit: 1000,
      leaseMs: 30_000,
      owner: "a",
      shards: a.owned(T0 + HB),
    });
    const mine = new Set(a.owned(T0 + HB));
    expect(claimA.length).toBe(
      jobs.filter((j) => mine.has(shardOf(j.id, store.shardCount))).length,
    );
    expect(claimA.every((j) => mine.has(j.shard))).toBe(true);
    const claimB = await store.jobsClaimDue({
      now: T0 + HB,
      dueBefore: T0 + HB,
      limit: 1000,
      leaseMs: 30_000,
      owner: "b",
      shards: b.owned(T0 + HB),
    });
    expect(claimA.length + claimB.length).toBe(200);
  });
});

describe("next due time per shard set", () => {
  it("reports the earliest due job of the given shards only", async () => {
    const store = await PostgresStore.open({
      url: pg.url,
      schema: freshSchema("nextdue"),
      shardCount: 8,
    });
    try {
      const job = jobMaker(T0);
      const make = (dueAt: number) => job(dueAt, { maxAttempts: 1 });
      // one job per day for 20 days: their shards vary
      const jobs = Array.from({ length: 20 }, (_, i) => make(T0 + i * 86_400_000 + 5));
      await store.jobsInsert({ jobs, now: T0 });
      expect((await store.jobsNextDue({ now: T0 })).earliestDue).toBe(T0 + 5);
      for (let shard = 0; shard < 8; shard++) {
        const mine = jobs
          .filter((j) => shardOf(j.id, store.shardCount) === shard)
          .map((j) => j.dueAt);
        const got = await store.jobsNextDue({ now: T0, shards: [shard] });
        expect(got.earliestDue).toBe(mine.length > 0 ? Math.min(...mine) : null);
      }
      expect((await store.jobsNextDue({ now: T0, shards: [] })).earliestDue).toBeNull();
    } finally {
      await store.close();
    }
  });
});
