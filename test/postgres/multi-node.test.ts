import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { insertAll, jobMaker } from "./helpers.js";

const T0 = Date.UTC(2026, 6, 1, 9, 0, 0);

const pg = usePostgresServer();

/** Several stores (one pool each, as several nodes would have) on one schema. */
describe("postgres: several nodes on one database", () => {
  let schema: string;
  let nodes: PostgresStore[];
  beforeEach(async () => {
    schema = freshSchema("multi");
    nodes = [];
    for (let i = 0; i < 3; i++) {
      nodes.push(await PostgresStore.open({ url: pg.url, schema, poolSize: 4 }));
    }
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it("never hands one job to two concurrent claimers", async () => {
    const job = jobMaker(T0);
    await insertAll(
      nodes[0]!,
      Array.from({ length: 6000 }, (_, i) => job(T0 + (i % 1000))),
      T0,
    );
    const claimedBy = new Map<string, number>();
    let duplicates = 0;
    await Promise.all(
      nodes.flatMap((store, n) =>
        [0, 1].map(async () => {
          for (;;) {
            const batch = await store.jobsClaimDue({
              now: T0 + 1000,
              dueBefore: T0 + 1000,
              limit: 50,
              leaseMs: 60_000,
              owner: `node-${n}`,
            });
            if (batch.length === 0) return;
            for (const j of batch) {
              if (claimedBy.has(j.id)) duplicates++;
              claimedBy.set(j.id, n);
            }
          }
        }),
      ),
    );
    expect(duplicates).toBe(0);
    expect(claimedBy.size).toBe(6000);
    // every node got a share: SKIP LOCKED splits the prefix instead of queueing
    const perNode = [0, 1, 2].map((n) => [...claimedBy.values()].filter((x) => x === n).length);
    expect(Math.min(...perNode)).toBeGreaterThan(0);
    expect((await nodes[0]!.jobsCountByStatus({})).claimed).toBe(6000);
  });

  it("wakes other nodes through LISTEN/NOTIFY when a write is due earlier than they know", async () => {
    const [a, b] = [nodes[0]!, nodes[1]!];
    const heard: number[] = [];
    let resolve!: () => void;
    const got = new Promise<void>((r) => (resolve = r));
    a.onEarlierDue((dueAt) => {
      heard.push(dueAt);
      resolve();
    });
    await a.listening();
    const job = jobMaker(T0);
    // due beyond b's notify horizon (60 s): no notification needed, the idle wake finds it
    await b.jobsInsert({ jobs: [job(T0 + 3_600_000)], now: T0 });
    // due in 5 s: a must hear it
    await b.jobsInsert({ jobs: [job(T0 + 5000)], now: T0 });
    await got;
    expect(heard).toEqual([T0 + 5000]);
  });

  it("wakes other nodes when the lease sweeper or a restart release puts jobs back", async () => {
    const [a, b] = [nodes[0]!, nodes[1]!];
    const heard: number[] = [];
    let wake: (() => void) | null = null;
    a.onEarlierDue((dueAt) => {
      heard.push(dueAt);
      wake?.();
    });
    await a.listening();
    const heardNext = () => new Promise<void>((r) => (wake = r));
    const job = jobMaker(T0);
    // due far ahead of b's notify horizon: inserting them wakes nobody
    const later = T0 + 3_600_000;
    await b.jobsInsert({ jobs: [job(later), job(later + 1)], now: T0 });
    const claim = (owner: string) =>
      b.jobsClaimDue({ now: later, dueBefore: later + 1, limit: 1, leaseMs: 10_000, owner });
    await claim("b/1");
    await claim("b/2");
    expect(heard).toEqual([]);
    // b's sweeper requeues the expired claims: a must hear of it
    let next = heardNext();
    expect(await b.leasesExpire({ now: later + 10_001, limit: 10 })).toEqual({
      requeued: 2,
      dead: 0,
      nextExpiresAt: null,
    });
    await next;
    expect(heard).toEqual([later]);
    // and a restarted node's release of its predecessor's claims
    await claim("b/1");
    next = heardNext();
    const released = await b.leasesReleaseStale({
      ownerPrefix: "b/",
      exceptOwner: "b/3",
      expiresBy: later + 20_000,
      now: later + 10_002,
      limit: 10,
    });
    expect(released).toBe(1);
    await next;
    expect(heard).toEqual([later, later]);
  });

  it("keeps one live job per idempotency key across nodes racing to insert it", async () => {
    const results = await Promise.all(
      nodes.map((store, n) => {
        const job = jobMaker(T0 + n * 1000);
        return store.jobsInsert({
          jobs: Array.from({ length: 20 }, (_, i) => job(T0 + i, { key: `k${i}` })),
          now: T0,
        });
      }),
    );
    for (let i = 0; i < 20; i++) {
      const created = results.filter((r) => r[i]!.created);
      expect(created.length).toBe(1);
      const id = created[0]![i]!.job.id;
      expect(results.every((r) => r[i]!.job.id === id)).toBe(true);
    }
    expect((await nodes[0]!.jobsCountByStatus({})).pending).toBe(20);
  });
});
