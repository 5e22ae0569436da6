import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { batchFor } from "../../src/engine/operation-runner.js";
import { WorkCost } from "../../src/engine/work-cost.js";

// The runner's time-box (HOLD_BUDGET_MS 20, FIRST_BATCH 100, MIN_BATCH 25): each batch is
// sized from its operation's WorkCost (how long a batch of it held the loop), so a batch
// holds the loop about the budget whatever the last batch did, and firing is not stalled.

/** A WorkCost on a ManualClock, and a batch of `jobs` jobs holding the loop `ms` timed on it. */
function workCost(): { cost: WorkCost; batch: (jobs: number, ms: number) => Promise<void> } {
  const clock = new ManualClock(Date.UTC(2026, 2, 1));
  const cost = new WorkCost(clock);
  const batch = (jobs: number, ms: number): Promise<void> =>
    cost.timed(jobs, () => {
      clock.set(clock.now() + ms);
      return Promise.resolve();
    });
  return { cost, batch };
}

/** A WorkCost that saw one batch of `jobs` jobs hold the loop `ms`. */
async function costAfter(jobs: number, ms: number): Promise<WorkCost> {
  const { cost, batch } = workCost();
  await batch(jobs, ms);
  return cost;
}

describe("operation batch sizes", () => {
  it("reads 100 jobs first (or batchSize when smaller), before any cost is known", () => {
    expect(batchFor(undefined, undefined, 2000)).toBe(100);
    expect(batchFor(undefined, undefined, 10)).toBe(10);
  });

  it("sizes a batch to what fits in 20 ms at the estimated cost", async () => {
    // 40 us a job: 500 fit
    const cost = await costAfter(100, 4);
    expect(cost.itemsWithin(20)).toBe(500);
    expect(batchFor(cost.itemsWithin(20), 2000, 2000)).toBe(500);
    // 10 us a job: 2,000 fit, and batchSize caps it
    expect(batchFor((await costAfter(100, 1)).itemsWithin(20), 2000, 2000)).toBe(2000);
  });

  it("grows at most twofold from the last batch, and never past batchSize", () => {
    expect(batchFor(20_000, 100, 2000)).toBe(200);
    expect(batchFor(20_000, 1500, 2000)).toBe(2000);
  });

  it("keeps at least 25 jobs (or batchSize when smaller), however slow", async () => {
    const slow = await costAfter(10, 100); // 10 ms a job: 2 fit
    expect(slow.itemsWithin(20)).toBe(2);
    expect(batchFor(slow.itemsWithin(20), 2000, 2000)).toBe(25);
    expect(batchFor(slow.itemsWithin(20), 10, 10)).toBe(10);
  });

  it("reads batchSize from a store that returns at once (asynchronous: PostgreSQL)", async () => {
    const cost = await costAfter(2000, 0);
    expect(cost.itemsWithin(20)).toBe(Infinity);
    expect(batchFor(cost.itemsWithin(20), 2000, 2000)).toBe(2000);
  });

  it("follows a slower batch by the running mean; a batch that read nothing is fixed cost", async () => {
    const { cost, batch } = workCost();
    await batch(100, 4); // 40 us a job: 500 fit
    // one batch held the loop 480 ms for 500 jobs (a checkpoint): 0.96 ms a job moves the
    // mean 30% of the way, to 0.316 ms: 63 fit (not 20, as if every job cost 0.96 ms)
    await batch(500, 480);
    expect(cost.itemsWithin(20)).toBe(63);
    expect(batchFor(cost.itemsWithin(20), 500, 2000)).toBe(63);
    // a fast batch brings it 30% of the way back down: 0.233 ms, 85 fit
    await batch(63, 63 * 0.04);
    expect(cost.itemsWithin(20)).toBe(85);
    // a batch that read nothing (5 ms) is the call's fixed part: 15 ms left for jobs
    await batch(0, 5);
    expect(cost.itemsWithin(20)).toBe(64);
  });
});
