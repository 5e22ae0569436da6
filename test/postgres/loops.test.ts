import { afterEach, describe, expect, it } from "vitest";
import { ManualClock, settle } from "../../src/core/clock.js";
import type { Logger } from "../../src/core/logger.js";
import { PartitionMaintenance } from "../../src/stores/postgres/partition-maintenance.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { ShardLeases } from "../../src/stores/postgres/shard-leases.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

/**
 * Issue 11 §3: PostgreSQL's background loops (shard-lease heartbeats, partition
 * maintenance, the LISTEN reconnect) run on the shared ServiceLoop and the clock they are
 * given, so a ManualClock drives them against a real server, without sleeping. (Before, each
 * had its own setTimeout and Date.now: advancing a manual clock did nothing.)
 */
// halts or restarts its server: one of its own, not its worker's shared one
const pg = usePostgresServer({ own: true });
const T0 = Date.UTC(2026, 5, 1, 8, 0, 0);
const HB = 1000;
const TTL = 3000;
/** The longest a jittered heartbeat waits (1.1 heartbeats), in whole ms. */
const STEP = 1100;

let stores: PostgresStore[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
});

async function open(opts: { shardCount?: number; bucketWidthMs?: number } = {}) {
  const store = await PostgresStore.open({ url: pg.url, schema: freshSchema("loops"), ...opts });
  stores.push(store);
  return store;
}

/** Resolves the next time `task` finishes a pass (a real class, observed, not replaced). */
function passWaiter<R>() {
  let waiting: ((r: R) => void)[] = [];
  return {
    done(r: R) {
      const w = waiting;
      waiting = [];
      for (const f of w) f(r);
    },
    next(): Promise<R> {
      return new Promise<R>((resolve) => waiting.push(resolve));
    },
  };
}

/** A loop whose passes a test can await, and the time of its last pass (its timer's). */
type Observed<L extends { runOnce(now?: number): Promise<unknown> }> = L & {
  readonly passes: ReturnType<typeof passWaiter<Awaited<ReturnType<L["runOnce"]>>>>;
  /** The time of the last pass (its timer's: the clock may have moved on since). */
  lastPassAt: number;
  /** Settles when the latest pass started has ended, whether it succeeded or failed. */
  settled: Promise<unknown>;
};

/**
 * `loop` itself, its own `runOnce` wrapped so each pass is recorded and announced: the
 * loop's timer calls `this.runOnce`, so the real loop runs, observed, not replaced.
 */
function observe<L extends { runOnce(now?: number): Promise<unknown> }>(
  loop: L,
  clock: ManualClock,
): Observed<L> {
  type R = Awaited<ReturnType<L["runOnce"]>>;
  const seen = Object.assign(loop, {
    passes: passWaiter<R>(),
    lastPassAt: 0,
    settled: Promise.resolve() as Promise<unknown>,
  });
  const run = loop.runOnce.bind(loop);
  seen.runOnce = async (now?: number) => {
    const at = now ?? clock.now();
    const pass = run(at);
    seen.settled = pass.catch(() => undefined);
    const r = (await pass) as R;
    seen.lastPassAt = at;
    seen.passes.done(r);
    return r;
  };
  return seen;
}

/**
 * A ManualClock whose `advance` waits, before each timer and at its end, for the passes of
 * `loops` in flight (heartbeats over the network) and then lets their next timers be set:
 * with only a few turns of the event loop, a heartbeat still waiting for the server when the
 * step ended set its next timer from the step's end instead of its own time, and under load
 * the heartbeats drifted past the adoption bound (seen in CI: 4,309 ms against 4,100).
 */
function loopClock(loops: readonly { settled: Promise<unknown> }[]): ManualClock {
  return new ManualClock(T0, {
    settle: async () => {
      await Promise.all(loops.map((l) => l.settled));
      await settle();
    },
  });
}

/** Moves `clock` on by `ms` and waits for the one pass of `loop` that this brings due. */
async function step<R>(clock: ManualClock, loop: { passes: { next(): Promise<R> } }, ms: number) {
  const pass = loop.passes.next();
  await clock.advance(ms);
  return pass;
}

describe("shard leases on the engine's clock", () => {
  it("heartbeats on the manual clock and adopts a dead node's shards once its lease has run out, not before", async () => {
    const store = await open({ shardCount: 24 });
    const nodes: { settled: Promise<unknown> }[] = [];
    const clockA = loopClock(nodes);
    const clockB = loopClock(nodes);
    // Death here is a stopped clock, which no liveness lock sees (its session lives on):
    // the heartbeats alone, and no NOTIFY-driven beats outside the manual clock.
    const node = (id: string, clock: ManualClock) =>
      observe(
        new ShardLeases(store.context, {
          nodeId: id,
          clock,
          heartbeatMs: HB,
          ttlMs: TTL,
          detectDeadNodes: false,
        }),
        clock,
      );
    const a = node("a", clockA);
    const b = node("b", clockB);
    nodes.push(a, b);
    try {
      await a.start(); // the first heartbeat is done when start() resolves
      expect(a.owned()).toHaveLength(24);
      await b.start();
      expect(b.owned()).toEqual([]); // a still holds every shard
      // Heartbeats wait 0.9 to 1.1 heartbeats: each step of 1.1 brings exactly one due.
      for (let round = 0; round < 2; round++) {
        await step(clockA, a, STEP);
        await step(clockB, b, STEP);
      }
      expect(a.owned()).toHaveLength(12);
      expect(b.owned()).toHaveLength(12);
      const bShards = b.owned();
      const bLastBeat = b.lastPassAt; // its lease runs out TTL after this

      // b dies: its clock stops, so its heartbeat timer never fires again.
      let adoptedAt: number | null = null;
      while (adoptedAt === null) {
        const r = await step(clockA, a, STEP);
        if (a.lastPassAt < bLastBeat + TTL) {
          // b's lease still holds: a takes none of its shards
          expect(r.owned.some((s) => bShards.includes(s))).toBe(false);
        } else if (r.owned.length === 24) {
          adoptedAt = a.lastPassAt;
        }
        expect(a.lastPassAt - bLastBeat).toBeLessThan(TTL + 3 * HB);
      }
      // on a's first heartbeat once b's ttl has run out
      expect(adoptedAt - bLastBeat).toBeGreaterThanOrEqual(TTL);
      expect(adoptedAt - bLastBeat).toBeLessThanOrEqual(TTL + STEP);
      expect(b.owned(bLastBeat + TTL)).toEqual([]); // b no longer trusts its stale leases
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("logs a failed heartbeat and retries it within a heartbeat on the clock", async () => {
    const store = await open({ shardCount: 4 });
    const clock = new ManualClock(T0);
    const errors: { loop?: string; failures?: number; retryInMs?: number }[] = [];
    const failed = passWaiter<undefined>();
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (obj) => {
        errors.push(obj);
        failed.done(undefined);
      },
    };
    const a = observe(
      new ShardLeases(store.context, {
        nodeId: "a",
        clock,
        logger,
        heartbeatMs: HB,
        detectDeadNodes: false, // its logger counts heartbeat failures only
      }),
      clock,
    );
    try {
      await a.start();
      expect(a.owned()).toHaveLength(4);
      // the node registry is gone (an operator dropped it): the heartbeat statement fails
      await store.connection.query(`ALTER TABLE "${store.schema}".nodes RENAME TO nodes_away`);
      const failure = failed.next();
      await clock.advance(STEP);
      await failure;
      expect(errors[0]).toMatchObject({ loop: "shard-leases", failures: 1 });
      const retryIn = errors[0]!.retryInMs!;
      expect(retryIn).toBeGreaterThanOrEqual(HB / 2);
      expect(retryIn).toBeLessThanOrEqual(HB);
      await store.connection.query(`ALTER TABLE "${store.schema}".nodes_away RENAME TO nodes`);
      const r = await step(clock, a, retryIn);
      expect(r.owned).toHaveLength(4);
      expect(errors).toHaveLength(1);
    } finally {
      await a.stop();
    }
  });

  it("tells onChange when its shards are trusted again after heartbeats failed past the lease", async () => {
    const store = await open({ shardCount: 4 });
    const clock = new ManualClock(T0);
    const changes: (readonly number[])[] = [];
    const quiet: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    };
    const a = observe(
      new ShardLeases(store.context, {
        nodeId: "a",
        clock,
        logger: quiet,
        heartbeatMs: HB,
        ttlMs: TTL,
        onChange: (shards) => changes.push(shards),
        // heartbeats on the manual clock only (no NOTIFY-driven ones, no liveness reconnects)
        detectDeadNodes: false,
      }),
      clock,
    );
    try {
      await a.start();
      expect(changes).toEqual([[0, 1, 2, 3]]);
      // Heartbeats fail (the registry renamed away) until the node stops trusting its leases.
      await store.connection.query(`ALTER TABLE "${store.schema}".nodes RENAME TO nodes_away`);
      while (a.owned().length > 0) await clock.advance(100);
      // A heartbeat started before the trust ran out may still be waiting on the server: let
      // it fail first, so this case is the failed-heartbeats one (the next test covers a
      // heartbeat that succeeds late).
      await a.settled;
      await store.connection.query(`ALTER TABLE "${store.schema}".nodes_away RENAME TO nodes`);
      const r = await step(clock, a, STEP);
      expect(r.owned).toEqual([0, 1, 2, 3]);
      // The same shards as before, yet claimable again only now: the engine must hear of it,
      // or its watcher, which found nothing to claim meanwhile, sleeps on (up to maxIdleMs).
      expect(changes).toEqual([
        [0, 1, 2, 3],
        [0, 1, 2, 3],
      ]);
    } finally {
      await a.stop();
    }
  });
});

it("tells onChange when a heartbeat slow to answer ends after the trust ran out", async () => {
  const store = await open({ shardCount: 4 });
  const clock = new ManualClock(T0);
  const changes: (readonly number[])[] = [];
  const a = observe(
    new ShardLeases(store.context, {
      nodeId: "a",
      clock,
      heartbeatMs: HB,
      ttlMs: TTL,
      onChange: (shards) => changes.push(shards),
      detectDeadNodes: false,
    }),
    clock,
  );
  const blocker = await store.connection.connect();
  try {
    await a.start();
    expect(changes).toEqual([[0, 1, 2, 3]]);
    // The next heartbeat starts while trusted, then waits on a lock past the trust's end.
    await blocker.query("BEGIN");
    await blocker.query(`LOCK TABLE "${store.schema}".nodes IN ACCESS EXCLUSIVE MODE`);
    const slow = a.passes.next();
    await clock.advance(STEP);
    while (a.owned().length > 0) await clock.advance(100);
    await blocker.query("COMMIT");
    expect((await slow).owned).toEqual([0, 1, 2, 3]);
    // It renewed the same shards as of its start, but owned() had said none meanwhile:
    // the engine must hear that they are claimable again.
    expect(changes).toEqual([
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
  } finally {
    await blocker.query("ROLLBACK").catch(() => undefined);
    blocker.release();
    await a.stop();
  }
});

describe("partition maintenance on the engine's clock", () => {
  it("runs a pass at start and one per interval as the manual clock moves: partitions made ahead, empty past ones dropped", async () => {
    const MIN = 60_000;
    const MIN_STEP = 66_000;
    const store = await open({ bucketWidthMs: MIN });
    const clock = new ManualClock(T0); // T0 starts a one-minute bucket
    const m = observe(
      new PartitionMaintenance(store.context, {
        clock,
        aheadBuckets: 2,
        dropAfterBuckets: 1,
        intervalMs: MIN,
      }),
      clock,
    );
    const liveStarts = async () => (await store.partitions.list("jobs_live")).map((p) => p.from);
    try {
      m.start();
      const first = await step(clock, m, 0); // the first pass is due at once
      expect(first.created).toBeGreaterThanOrEqual(3);
      expect(await liveStarts()).toEqual([T0, T0 + MIN, T0 + 2 * MIN]);
      // passes wait 0.9 to 1.1 intervals: three steps of 1.1 minutes bring three passes
      const dropped: string[] = [];
      for (let i = 0; i < 3; i++) dropped.push(...(await step(clock, m, MIN_STEP)).dropped);
      const current = Math.floor((m.lastPassAt - T0) / MIN); // the last pass's bucket
      // the partitions of the two buckets ahead exist; those past the kept one are gone
      const starts = await liveStarts();
      expect(starts.at(-1)).toBe(T0 + (current + 2) * MIN);
      expect(starts[0]).toBe(T0 + (current - 1) * MIN);
      expect(dropped).toContain(`jobs_live_p${T0}`);
    } finally {
      await m.stop();
    }
    expect(clock.pendingTimers).toBe(0); // stop() cleared its timer
  });
});

describe("the LISTEN connection's reconnect on the engine's clock", () => {
  it("retries a lost connection with a growing backoff on the manual clock, then tells listeners something may be due", async (ctx) => {
    if (!pg.server.owned) ctx.skip(); // PG_URL names a server this test cannot stop
    const store = await open();
    const clock = new ManualClock(T0);
    const attempts: { failures: number; retryInMs: number }[] = [];
    const failed = passWaiter<undefined>();
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (obj) => {
        const o = obj as { loop?: string; failures: number; retryInMs: number };
        if (o.loop !== "listen-connection") return;
        attempts.push({ failures: o.failures, retryInMs: o.retryInMs });
        failed.done(undefined);
      },
    };
    const heard: number[] = [];
    const zero = passWaiter<undefined>();
    store.onEarlierDue(
      (dueAt) => {
        heard.push(dueAt);
        if (dueAt === 0) zero.done(undefined);
      },
      { clock, logger },
    );
    await store.listening();
    try {
      // The server goes away: the lost connection is retried at once, and that fails.
      let failure = failed.next();
      await pg.server.halt();
      await failure;
      expect(attempts).toEqual([{ failures: 1, retryInMs: expect.any(Number) }]);
      for (let n = 2; n <= 4; n++) {
        const wait = attempts.at(-1)!.retryInMs;
        // equal jitter: between half and all of min(5000, 200 * 2^(n-2))
        const base = Math.min(5000, 200 * 2 ** (n - 2));
        expect(wait).toBeGreaterThanOrEqual(base / 2);
        expect(wait).toBeLessThanOrEqual(base);
        await clock.advance(wait - 1);
        expect(attempts).toHaveLength(n - 1); // not before its time
        failure = failed.next();
        await clock.advance(1);
        await failure;
        expect(attempts.at(-1)!.failures).toBe(n);
      }
      // The server is back: the next attempt connects and listeners hear "maybe due now".
      await pg.server.resume();
      const told = zero.next();
      await clock.advance(attempts.at(-1)!.retryInMs);
      await told;
      expect(heard).toEqual([0]);
      expect(attempts).toHaveLength(4);
    } finally {
      await pg.server.resume();
    }
  });
});
