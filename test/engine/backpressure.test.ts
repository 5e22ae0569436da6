import { afterEach, describe, expect, it } from "vitest";
import { makeHarness } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: ReturnType<typeof makeHarness>;
afterEach(async () => {
  await h?.close();
});

describe("backpressure (maxHeld)", () => {
  it("after claiming stops at maxHeld it resumes with full batches, not a claim per freed slot", async () => {
    h = makeHarness({ maxHeld: 10, claimBatchSize: 4, concurrency: 1 });
    const release: (() => void)[] = [];
    let fired = 0;
    h.scheduler.handle("t", async () => {
      await new Promise<void>((r) => release.push(r));
      fired++;
    });
    await h.scheduler.scheduleMany(Array.from({ length: 30 }, () => ({ dueAt: T0, target: "t" })));
    const claims: number[] = [];
    let peak = 0;
    const claim = h.store.jobsClaimDue.bind(h.store);
    h.store.jobsClaimDue = async (p) => {
      const jobs = await claim(p);
      if (jobs.length > 0) claims.push(jobs.length);
      return jobs;
    };
    h.scheduler.start();
    await h.clock.advance(1);
    // two batches fit under maxHeld; a third would not, so claiming stops at 8 held
    expect(claims).toEqual([4, 4]);
    while (fired < 30) {
      release.splice(0).forEach((r) => r());
      await h.clock.advance(1);
      peak = Math.max(peak, (await h.scheduler.stats()).inFlight);
    }
    // before, every settled job woke the watcher to claim its one freed slot: 4, 4, 2, 1, 1, ...
    expect(claims).toEqual([4, 4, 4, 4, 4, 4, 4, 2]);
    expect(peak).toBeLessThanOrEqual(10);
    expect((await h.scheduler.stats()).counts).toMatchObject({ succeeded: 30, claimed: 0 });
  });

  it("with maxHeld below the claim batch size, claims up to maxHeld once nothing is held", async () => {
    h = makeHarness({ maxHeld: 3, claimBatchSize: 500, concurrency: 1 });
    const release: (() => void)[] = [];
    let fired = 0;
    h.scheduler.handle("t", async () => {
      await new Promise<void>((r) => release.push(r));
      fired++;
    });
    await h.scheduler.scheduleMany(Array.from({ length: 7 }, () => ({ dueAt: T0, target: "t" })));
    const claims: number[] = [];
    const claim = h.store.jobsClaimDue.bind(h.store);
    h.store.jobsClaimDue = async (p) => {
      const jobs = await claim(p);
      if (jobs.length > 0) claims.push(jobs.length);
      return jobs;
    };
    h.scheduler.start();
    while (fired < 7) {
      await h.clock.advance(1);
      release.splice(0).forEach((r) => r());
    }
    expect(claims).toEqual([3, 3, 1]);
  });
});
