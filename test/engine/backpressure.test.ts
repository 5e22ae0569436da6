import { afterEach, expect, it } from "vitest";
import { type Harness, describeOnEveryStore } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** Handler "t" that waits until released; counts the jobs it finished. */
function gatedHandler(harness: Harness) {
  const waiting: (() => void)[] = [];
  const gate = {
    fired: 0,
    releaseAll: () => waiting.splice(0).forEach((r) => r()),
  };
  harness.scheduler.handle("t", async () => {
    await new Promise<void>((r) => waiting.push(r));
    gate.fired++;
  });
  return gate;
}

/** Sizes of the non-empty claims the store makes from now on. */
function recordClaims(harness: Harness): number[] {
  const claims: number[] = [];
  const claim = harness.store.jobsClaimDue.bind(harness.store);
  harness.store.jobsClaimDue = async (p) => {
    const jobs = await claim(p);
    if (jobs.length > 0) claims.push(jobs.length);
    return jobs;
  };
  return claims;
}

describeOnEveryStore("backpressure (maxHeld)", (make) => {
  it("after claiming stops at maxHeld it resumes with full batches, not a claim per freed slot", async () => {
    h = await make({ maxHeld: 10, claimBatchSize: 4, concurrency: 1 });
    const gate = gatedHandler(h);
    await h.scheduler.scheduleMany(Array.from({ length: 30 }, () => ({ dueAt: T0, target: "t" })));
    const claims = recordClaims(h);
    let peak = 0;
    h.scheduler.start();
    await h.clock.advance(1);
    // two batches fit under maxHeld; a third would not, so claiming stops at 8 held
    expect(claims).toEqual([4, 4]);
    while (gate.fired < 30) {
      gate.releaseAll();
      await h.clock.advance(1);
      peak = Math.max(peak, (await h.scheduler.stats()).inFlight);
    }
    // before, every settled job woke the watcher to claim its one freed slot: 4, 4, 2, 1, 1, ...
    expect(claims).toEqual([4, 4, 4, 4, 4, 4, 4, 2]);
    expect(peak).toBeLessThanOrEqual(10);
    expect((await h.scheduler.stats()).counts).toMatchObject({ succeeded: 30, claimed: 0 });
  });

  it("with maxHeld below the claim batch size, claims up to maxHeld once nothing is held", async () => {
    h = await make({ maxHeld: 3, claimBatchSize: 500, concurrency: 1 });
    const gate = gatedHandler(h);
    await h.scheduler.scheduleMany(Array.from({ length: 7 }, () => ({ dueAt: T0, target: "t" })));
    const claims = recordClaims(h);
    h.scheduler.start();
    while (gate.fired < 7) {
      await h.clock.advance(1);
      gate.releaseAll();
    }
    expect(claims).toEqual([3, 3, 1]);
  });
});
