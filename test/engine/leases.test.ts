import { afterEach, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { type Harness, describeOnEveryStore, record, silentLogger } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** A handler that holds each job until the test lets it go. */
function gate() {
  const started: string[] = [];
  const waiting: (() => void)[] = [];
  return {
    started,
    handler: (job: { id: string }) => {
      started.push(job.id);
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    releaseAll() {
      for (const w of waiting.splice(0)) w();
    },
  };
}

describeOnEveryStore("leases: renewal, restart release, stop (manual clock)", (make) => {
  it("renews a running job's lease, so a handler may outlast the lease without losing its claim", async () => {
    h = await make({ leaseMs: 15_000, handlerTimeoutMs: 120_000 });
    const g = gate();
    h.scheduler.handle("slow", g.handler);
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 10, target: "slow" });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 10);
    expect(g.started).toEqual([job.id]);
    // four leases long: without renewal the sweeper would have requeued it three times
    await h.clock.advanceTo(T0 + 60_000);
    const held = await h.scheduler.get(job.id);
    expect(held).toMatchObject({ status: "claimed", attempts: 1 });
    expect(held!.leaseExpiresAt).toBeGreaterThan(T0 + 60_000);
    expect(held!.leaseExpiresAt).toBeLessThanOrEqual(T0 + 60_000 + 15_000);
    expect(await h.scheduler.sweepLeases()).toEqual({
      requeued: 0,
      dead: 0,
      nextExpiresAt: held!.leaseExpiresAt,
    });
    const fired = record(h.scheduler, "succeeded");
    g.releaseAll();
    await h.scheduler.idle();
    expect(fired.map((e) => e.args.job.id)).toEqual([job.id]);
    expect(g.started).toEqual([job.id]); // one delivery, never a second
    expect(await h.scheduler.get(job.id)).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it("a restarted node gives back its dead predecessor's claims within two renewal intervals, attempt not counted", async () => {
    h = await make({ nodeName: "node-1", leaseMs: 15_000, leaseRenewIntervalMs: 2000 });
    const fired: { id: string; at: number; attempt: number }[] = [];
    const [dead, twin, stranger] = await h.scheduler.scheduleMany([
      { dueAt: T0, target: "t" },
      { dueAt: T0 + 1, target: "t" },
      { dueAt: T0 + 2, target: "t" },
    ]);
    // Three earlier claims with the same lease settings, all last renewed at T0 + 2:
    // a predecessor of node-1 that died then, a live twin misconfigured with the same
    // name, and another node.
    await h.store.bucketsStage({ until: T0 + 3_600_000, maxRows: 100 });
    const claim = (owner: string, now: number) =>
      h.store.jobsClaimDue({ now, dueBefore: now, limit: 1, leaseMs: 15_000, owner });
    await claim("node-1/predecessor", T0 + 2);
    await claim("node-1/twin", T0 + 2);
    await claim("node-2/x", T0 + 2);
    h.scheduler.handle("t", (job, ctx) => {
      fired.push({ id: job.id, at: h.clock.now(), attempt: ctx.attempt });
    });
    await h.clock.advanceTo(T0 + 500); // the restart
    h.scheduler.start();
    for (let t = T0 + 2000; t <= T0 + 20_000; t += 2000) {
      await h.clock.advanceTo(t);
      // the twin is alive: it renews on schedule
      await h.store.leasesRenew({ owner: "node-1/twin", now: t, leaseMs: 15_000 });
    }
    const predecessor = fired.find((f) => f.id === dead!.job.id)!;
    // abandoned once 1.5 intervals (3 s) past its last renewal; seen within half an interval
    expect(predecessor.at).toBeGreaterThanOrEqual(T0 + 2 + 3000);
    expect(predecessor.at).toBeLessThanOrEqual(T0 + 2 + 4000 + 1000);
    expect(predecessor.attempt).toBe(1); // the dead process's attempt was given back
    // the live twin keeps its claim; the other node's comes back only when its lease ends
    expect(fired.some((f) => f.id === twin!.job.id)).toBe(false);
    expect(await h.scheduler.get(twin!.job.id)).toMatchObject({ status: "claimed" });
    const other = fired.find((f) => f.id === stranger!.job.id)!;
    expect(other.at).toBeGreaterThanOrEqual(T0 + 2 + 15_000);
    expect(other.attempt).toBe(2);
  });

  it("takes one stable node name per host and store by default, and a fresh lease owner per start", async () => {
    h = await make();
    const again = new Scheduler({ store: h.store, logger: silentLogger });
    expect(again.options.nodeName).toBe(h.scheduler.options.nodeName);
    expect(again.options.leaseOwner).not.toBe(h.scheduler.options.leaseOwner);
    expect(again.options.leaseOwner.startsWith(`${again.options.nodeName}/`)).toBe(true);
    expect(() => new Scheduler({ store: h.store, nodeName: "a/b" })).toThrow(/nodeName/);
    expect(
      () => new Scheduler({ store: h.store, leaseMs: 3000, leaseRenewIntervalMs: 1500 }),
    ).toThrow(/leaseRenewIntervalMs/);
  });

  it("on stop starts nothing new, even as running handlers free their slots, and gives unstarted claims back at once", async () => {
    h = await make({ concurrency: 1 });
    const g = gate();
    h.scheduler.handle("t", g.handler);
    const made = await h.scheduler.scheduleMany([
      { dueAt: T0, target: "t" },
      { dueAt: T0 + 1, target: "t" },
      { dueAt: T0 + 2, target: "t" },
      { dueAt: T0 + 600, target: "t" }, // still in the timing wheel at the stop
    ]);
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 100);
    expect(g.started).toEqual([made[0]!.job.id]);
    expect((await h.scheduler.stats()).counts).toMatchObject({ claimed: 4 });
    const stopped = h.scheduler.stop({ timeoutMs: 5000 });
    // the running handler finishes right after the signal: its slot must stay empty
    g.releaseAll();
    await stopped;
    expect(g.started).toEqual([made[0]!.job.id]);
    expect(await h.scheduler.get(made[0]!.job.id)).toMatchObject({ status: "succeeded" });
    for (const { job } of made.slice(1)) {
      expect(await h.scheduler.get(job.id)).toMatchObject({
        status: "pending",
        attempts: 0,
        leaseOwner: null,
      });
    }
  });

  it("a handler that outlives the stop's abort settles nothing after close(): no retry loop against the closed store", async () => {
    // The SIGTERM hang of the chaos run: a delivery that returned after the stop had
    // flushed and the store had closed queued a settlement the settler retried forever (a
    // ref'd timer every 5 s), so `serve` never exited.
    const errors: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (_o: object, msg?: string) => void errors.push(msg ?? ""),
    };
    h = await make({ logger });
    const g = gate(); // ignores its signal: it ends only when the test lets it
    h.scheduler.handle("t", g.handler);
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 10, target: "t" });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 100);
    expect(g.started).toEqual([job.id]);
    const writes: number[] = [];
    const write = h.store.jobsSettle.bind(h.store);
    h.store.jobsSettle = (p) => {
      writes.push(p.settlements.length);
      return write(p);
    };
    await h.scheduler.close({ timeoutMs: 1 });
    g.releaseAll(); // the handler returns after the store closed
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(writes).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("a handler given up on at stop keeps its claim for its lease (or a restart of the node name)", async () => {
    h = await make({ nodeName: "node-1" });
    const g = gate();
    h.scheduler.handle("t", g.handler);
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 10, target: "t" });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 100);
    await h.scheduler.stop({ timeoutMs: 1 });
    g.releaseAll();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(await h.scheduler.get(job.id)).toMatchObject({ status: "claimed", attempts: 1 });
    expect((await h.scheduler.stats()).inFlight).toBe(0);
  });
});
