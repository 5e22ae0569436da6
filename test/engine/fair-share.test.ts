import { afterEach, describe, expect, it } from "vitest";
import { FairQueue } from "../../src/engine/fair-queue.js";
import type { Job } from "../../src/core/job.js";
import { type Harness, describeOnEveryStore, record } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** Handler "slow" that holds every job until released. */
function gate(harness: Harness) {
  const waiting: (() => void)[] = [];
  let started = 0;
  harness.scheduler.handle("slow", async () => {
    started++;
    await new Promise<void>((r) => waiting.push(r));
  });
  return {
    get started() {
      return started;
    },
    get holding() {
      return waiting.length;
    },
    releaseAll: () => waiting.splice(0).forEach((r) => r()),
  };
}

describeOnEveryStore("fair share among tenants (manual clock)", (make) => {
  it("a tenant whose jobs hold every slot it may take does not delay another tenant's job", async () => {
    h = await make({ concurrency: 10 });
    const slow = gate(h);
    h.scheduler.handle("fast", () => "ok");
    await h.scheduler.scheduleMany(
      Array.from({ length: 100 }, () => ({ tenant: "a", dueAt: T0, target: "slow" })),
    );
    const { job: bJob } = await h.scheduler.schedule({ tenant: "b", dueAt: T0, target: "fast" });
    const fired = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advance(1);
    // before: the queue was one FIFO, a's first ten took every slot and b waited behind 100
    expect(fired.map((e) => e.args.job.id)).toEqual([bJob.id]);
    expect(fired[0]!.args.latenessMs).toBeLessThanOrEqual(1);
    // a runs its share (concurrency minus a tenth), one slot stays free for others
    expect(slow.holding).toBe(9);
    expect(h.scheduler.options.tenantConcurrency).toBe(9);
    while (slow.started < 100) {
      slow.releaseAll();
      await h.clock.advance(1);
    }
    slow.releaseAll();
    await h.clock.advance(1);
    expect((await h.scheduler.stats({ tenant: "a" })).counts).toMatchObject({ succeeded: 100 });
  });

  // claim batch 500: larger than the held set, so claiming must not wait for all of it to free
  it.each([5, 500])(
    "a tenant with more due jobs than maxHeld leaves room to claim another tenant's due job (claim batch %i)",
    async (claimBatchSize) => {
      h = await make({ concurrency: 4, tenantConcurrency: 3, maxHeld: 20, claimBatchSize });
      const slow = gate(h);
      h.scheduler.handle("fast", () => "ok");
      await h.scheduler.scheduleMany(
        Array.from({ length: 60 }, () => ({ tenant: "a", dueAt: T0 - 1000, target: "slow" })),
      );
      // b's job is due after every one of a's (the plain due prefix would reach it last), and
      // only once a's jobs hold the held set (beyond the first claim's horizon)
      const { job: bJob } = await h.scheduler.schedule({
        tenant: "b",
        dueAt: T0 + 2000,
        target: "fast",
      });
      const claims: string[][] = [];
      const claim = h.store.jobsClaimDue.bind(h.store);
      h.store.jobsClaimDue = async (p) => {
        const jobs = await claim(p);
        if (jobs.length > 0) claims.push(jobs.map((j) => j.tenant));
        return jobs;
      };
      const fired = record(h.scheduler, "fired");
      h.scheduler.start();
      for (let step = 0; step < 40 && fired.length === 0; step++) await h.clock.advance(100);
      // before: a's jobs filled all 20 held slots and b's job stayed in the store while a's
      // slow handlers held them (forever here)
      expect(fired.map((e) => e.args.job.id)).toEqual([bJob.id]);
      const bClaim = claims.findIndex((c) => c.includes("b"));
      expect(bClaim).toBeGreaterThanOrEqual(0);
      expect(bClaim).toBeLessThanOrEqual(4);
      // a holds at most its cap (maxHeld minus a tenth)
      expect(h.scheduler.options.tenantMaxHeld).toBe(18);
      expect(claims.flat().filter((t) => t === "a").length).toBeLessThanOrEqual(18);
      while (slow.started < 60) {
        slow.releaseAll();
        await h.clock.advance(1);
      }
      slow.releaseAll();
      await h.clock.advance(1);
      expect((await h.scheduler.stats({ tenant: "a" })).counts).toMatchObject({ succeeded: 60 });
    },
  );

  it("tenants take turns at the free slots", async () => {
    h = await make({ concurrency: 1 });
    const order: string[] = [];
    h.scheduler.handle("t", (job) => {
      order.push(job.tenant);
    });
    await h.scheduler.scheduleMany([
      ...Array.from({ length: 4 }, () => ({ tenant: "a", dueAt: T0, target: "t" })),
      ...Array.from({ length: 2 }, () => ({ tenant: "b", dueAt: T0, target: "t" })),
    ]);
    h.scheduler.start();
    for (let i = 0; i < 10 && order.length < 6; i++) await h.clock.advance(1);
    expect(order).toEqual(["a", "b", "a", "b", "a", "a"]);
  });
});

describeOnEveryStore("a claimed job's lease covers its wait in memory", (make) => {
  it("gives back jobs that cannot start before their lease runs out: none dead, none run twice", async () => {
    // 20 jobs of 900 ms, two at a time: the last starts ~9 s after the claim, three leases
    h = await make({
      concurrency: 2,
      leaseMs: 3000,
      handlerTimeoutMs: 1000,
      horizonMs: 500,
      leaseSweepIntervalMs: 200,
      maxAttempts: 1,
    });
    const runs = new Map<string, number>();
    h.scheduler.handle("t", async (job) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      await new Promise<void>((r) => h.clock.setTimer(r, 900));
    });
    const jobs = await h.scheduler.scheduleMany(
      Array.from({ length: 20 }, () => ({ dueAt: T0, target: "t" })),
    );
    const events = record(h.scheduler, "succeeded", "dead");
    h.scheduler.start();
    for (let i = 0; i < 300 && events.length < 20; i++) await h.clock.advance(50);
    // before: the waiting jobs' leases ran out, the sweeper recorded them dead (their one
    // attempt spent) and the dispatcher then ran them anyway on a lost claim
    expect((await h.scheduler.stats()).counts).toMatchObject({ succeeded: 20, dead: 0 });
    expect(events.filter((e) => e.kind === "dead")).toEqual([]);
    expect(events.filter((e) => e.kind === "succeeded").length).toBe(20);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runs.size).toBe(20);
    for (const { job } of jobs) {
      expect(await h.scheduler.get(job.id)).toMatchObject({ status: "succeeded", attempts: 1 });
    }
    // the run outlasted two leases: the waits really were longer than a lease
    expect(h.clock.now() - T0).toBeGreaterThan(2 * 3000);
  });
});

describe("FairQueue", () => {
  const job = (tenant: string, id: string): Job => ({ tenant, id }) as Job;

  it("caps each lane and each tenant, and lists them again when a job finishes", () => {
    const q = new FairQueue(2);
    for (let i = 0; i < 3; i++) q.push(job("a", `a-slow-${i}`), "slow", 1);
    for (let i = 0; i < 3; i++) q.push(job("a", `a-fast-${i}`), "fast", 5);
    q.push(job("b", "b-0"), "x", 5);
    const first = [q.take(), q.take(), q.take()];
    expect(first.map((t) => t?.job.id)).toEqual(["a-slow-0", "b-0", "a-fast-0"]);
    // a is at its cap of 2, b has nothing waiting
    expect(q.take()).toBeUndefined();
    q.done(first[0]!.lane);
    // a's slow lane finished one: a may run a second job again, its fast lane's turn
    expect(q.take()?.job.id).toBe("a-fast-1");
    expect(q.take()).toBeUndefined();
    expect(q.size).toBe(3);
    expect(
      q
        .remove((j) => j.id.startsWith("a-slow"))
        .map((j) => j.id)
        .sort(),
    ).toEqual(["a-slow-1", "a-slow-2"]);
    expect(q.drain().map((j) => j.id)).toEqual(["a-fast-2"]);
    expect(q.size).toBe(0);
  });
});
