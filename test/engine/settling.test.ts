import { afterEach, expect, it } from "vitest";
import { settle } from "../../src/core/clock.js";
import { type Harness, describeOnEveryStore, record } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: Harness;
let openGate: () => void = () => undefined;
afterEach(async () => {
  openGate();
  await h?.close();
});

/** Holds every settlement write of the harness's store until the gate opens. */
function gateSettles(harness: Harness): { writes: number[] } {
  const writes: number[] = [];
  const gate = new Promise<void>((r) => (openGate = r));
  const write = harness.store.jobsSettle.bind(harness.store);
  harness.store.jobsSettle = async (p) => {
    writes.push(p.settlements.length);
    await gate;
    return write(p);
  };
  return { writes };
}

describeOnEveryStore("settling (a slot is the handler's, not the write's)", (make) => {
  it("a slow settlement write does not hold a handler slot; the job stays held until it is recorded", async () => {
    h = await make({ concurrency: 1 });
    const started: string[] = [];
    h.scheduler.handle("t", (job) => {
      started.push(job.id);
    });
    const jobs = await h.scheduler.scheduleMany(
      Array.from({ length: 3 }, () => ({ dueAt: T0 + 10, target: "t" })),
    );
    const gated = gateSettles(h);
    const fired = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 10);
    // with one slot, all three handlers ran while the first write is still blocked
    expect(started).toEqual(jobs.map((r) => r.job.id));
    expect(gated.writes.length).toBeGreaterThan(0);
    // but nothing is reported before it is recorded, and the jobs still count as held
    expect(fired).toEqual([]);
    expect((await h.scheduler.stats()).inFlight).toBe(3);
    expect(await h.scheduler.get(jobs[0]!.job.id)).toMatchObject({ status: "claimed" });
    openGate();
    await h.clock.advance(1);
    expect(fired.map((e) => e.args.job.id)).toEqual(jobs.map((r) => r.job.id));
    expect((await h.scheduler.stats()).inFlight).toBe(0);
    for (const { job } of jobs) {
      expect(await h.scheduler.get(job.id)).toMatchObject({ status: "succeeded" });
    }
  });

  it("writes the settlements of handlers that finish together in one batch, beyond the concurrency limit", async () => {
    h = await make({ concurrency: 2 });
    h.scheduler.handle("t", () => undefined);
    await h.scheduler.scheduleMany(
      Array.from({ length: 50 }, () => ({ dueAt: T0 + 5, target: "t" })),
    );
    const writes: number[] = [];
    const write = h.store.jobsSettle.bind(h.store);
    h.store.jobsSettle = (p) => {
      writes.push(p.settlements.length);
      return write(p);
    };
    const fired = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 5);
    expect(fired).toHaveLength(50);
    // before, each write held at most `concurrency` (2) settlements
    expect(writes).toEqual([50]);
  });

  it("idle() and stop() wait for pending settlements and report them first", async () => {
    h = await make({ concurrency: 1 });
    h.scheduler.handle("t", () => "done");
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 10, target: "t" });
    gateSettles(h);
    const fired = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 10);
    let idle = false;
    let stopped = false;
    const idling = h.scheduler.idle().then(() => {
      idle = true;
      expect(fired).toHaveLength(1);
    });
    const stopping = h.scheduler.stop().then(() => {
      stopped = true;
      expect(fired).toHaveLength(1);
    });
    await settle(20);
    expect({ idle, stopped }).toEqual({ idle: false, stopped: false });
    openGate();
    await Promise.all([idling, stopping]);
    expect(await h.scheduler.get(job.id)).toMatchObject({
      status: "succeeded",
      lastResult: "done",
    });
  });
});
