import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import type { NewJob } from "../../src/core/job.js";
import { quietLogger } from "../../src/core/logger.js";
import type { Store, StoreCapability } from "../../src/store/store.js";
import { freshStorePerTest, jobMaker } from "../support/jobs.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

/** The optional members of Store, by the type itself. */
type OptionalMember = {
  [K in keyof Store]-?: object extends Pick<Store, K> ? K : never;
}[keyof Store];
/**
 * Compiles only while every optional member of Store is a declared capability and every
 * capability an optional member: a new optional member needs a capability (which every
 * store must then declare) and a case below (CASES is keyed by capability).
 */
const EXHAUSTIVE: [OptionalMember] extends [StoreCapability]
  ? [StoreCapability] extends [OptionalMember]
    ? true
    : never
  : never = true;

/**
 * Migrations and the optional capabilities, part of the store contract (run by
 * describeStoreContract). A store declares in `capabilities` which optional members it has;
 * a declared one must work as the contract says, an undeclared one must be absent, so no
 * capability goes untested on a store that has it, nor is used on one that does not.
 */
export function describeCapabilityContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (migrations and capabilities): ${name}`, () => {
    const t = freshStorePerTest(makeStore);
    const job = jobMaker(T0);

    it("migrates again as a no-op, concurrently too, keeping every job and counter", async () => {
      expect(EXHAUSTIVE).toBe(true);
      const [before] = await t.store.jobsInsert({ jobs: [job(T0 + 5000)], now: T0 });
      await t.store.migrate();
      await Promise.all([t.store.migrate(), t.store.migrate()]);
      expect(await t.store.jobGet({ id: before!.job.id })).toEqual(before!.job);
      expect((await t.store.jobsCountByStatus({})).pending).toBe(1);
      const [after] = await t.store.jobsInsert({ jobs: [job(T0 + 6000)], now: T0 });
      expect(after!.created).toBe(true);
      expect((await t.store.jobsCountByStatus({})).pending).toBe(2);
    });

    it("says where its data lives, without credentials", () => {
      expect(typeof t.store.location).toBe("string");
      expect(t.store.location.length).toBeGreaterThan(0);
      expect(t.store.location).not.toMatch(/:[^/@]*@/); // no user:password@
    });

    it("declares every capability, and has exactly the optional members it declares", () => {
      const declared = Object.entries(t.store.capabilities);
      expect(declared.map(([k]) => k).sort()).toEqual(Object.keys(CASES).sort());
      for (const [member, supported] of declared) {
        expect({ member, type: typeof t.store[member as StoreCapability] }).toEqual({
          member,
          // pauses is a member object (a PauseStore); the others are methods
          type: supported ? (member === "pauses" ? "object" : "function") : "undefined",
        });
      }
    });

    for (const [capability, run] of Object.entries(CASES) as [StoreCapability, Case][]) {
      it(`${capability}: works where declared, is absent where not`, async () => {
        if (!t.store.capabilities[capability]) {
          expect(t.store[capability]).toBeUndefined();
          return;
        }
        await run(t.store, job);
      });
    }
  });
}

type Case = (store: Store, job: (dueAt: number) => NewJob) => Promise<void>;

/** One case per capability, run on a store that declares it. */
const CASES: Record<StoreCapability, Case> = {
  async nodeStart(store) {
    const errors: object[] = [];
    const logger = {
      ...quietLogger,
      warn: (o: object) => errors.push(o),
      error: (o: object) => errors.push(o),
    };
    const params = (nodeId: string) => ({
      nodeId,
      clock: systemClock(),
      logger,
      onShardsChange: () => {},
    });
    const all = [...Array(store.shardCount).keys()];
    // a lone node owns every shard once started, and hands them back when it stops
    const first = await store.nodeStart!(params("contract-a"));
    expect([...(first.shards() ?? all)].sort((a, b) => a - b)).toEqual(all);
    await first.stop();
    const second = await store.nodeStart!(params("contract-b"));
    try {
      expect([...(second.shards() ?? all)].sort((a, b) => a - b)).toEqual(all);
    } finally {
      await second.stop();
    }
    expect(errors).toEqual([]);
  },

  async pauses(store) {
    // The full cases are pause-contract.ts; here the member answers as a pause store does.
    expect(await store.pauses!.pausesList({})).toEqual([]);
    expect(await store.pauses!.pausedJobsCount({})).toBe(0);
  },
  async clockRead(store) {
    // the store's own clock, here on the same machine as the test
    const before = Date.now();
    const read = await store.clockRead!();
    expect(Number.isFinite(read)).toBe(true);
    expect(Math.abs(read - before)).toBeLessThan(60_000);
  },

  async storageProbe(store) {
    // the test's files have room: the probe resolves (it throws StorageFullError on a full disk)
    await expect(store.storageProbe!({ now: T0 })).resolves.toBeUndefined();
  },

  async onEarlierDue(store, job) {
    const heard: number[] = [];
    let wake!: () => void;
    const first = new Promise<void>((r) => (wake = r));
    const unsubscribe = store.onEarlierDue!((dueAt) => {
      heard.push(dueAt);
      wake();
    });
    try {
      // The subscription connects in the background: writes before it listens go unheard.
      // Each write is due earlier than the one before, so each is announced; a bounded
      // number of writes, never a sleep.
      const written: number[] = [];
      let got = false;
      void first.then(() => (got = true));
      for (let i = 0; i < 500 && !got; i++) {
        const dueAt = T0 + 5000 - i;
        written.push(dueAt);
        await store.jobsInsert({ jobs: [job(dueAt)], now: T0 });
        await Promise.race([first, new Promise((r) => setImmediate(r))]);
      }
      expect(got, `nothing heard after ${written.length} ever earlier writes`).toBe(true);
      expect(heard.every((d) => written.includes(d))).toBe(true);
    } finally {
      unsubscribe();
    }
  },
};
