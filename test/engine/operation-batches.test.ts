import { describe, expect, it } from "vitest";
import { batchFor, jobCostAfter } from "../../src/engine/operation-runner.js";

// The runner's time-box (HOLD_BUDGET_MS 20, FIRST_BATCH 100, MIN_BATCH 25): each batch is
// sized from an estimate of the event loop time a job of its operation costs, so a batch
// holds the loop about the budget whatever the last batch did, and firing is not stalled.
describe("operation batch sizes", () => {
  it("reads 100 jobs first (or batchSize when smaller), before any cost is known", () => {
    expect(batchFor(undefined, undefined, 2000)).toBe(100);
    expect(batchFor(undefined, undefined, 10)).toBe(10);
  });

  it("sizes a batch to what fits in 20 ms at the estimated cost", () => {
    // 40 us a job: 500 fit
    expect(batchFor(0.04, 2000, 2000)).toBe(500);
    expect(batchFor(0.01, 2000, 2000)).toBe(2000); // 2,000 fit: batchSize caps it
  });

  it("grows at most twofold from the last batch, and never past batchSize", () => {
    expect(batchFor(0.001, 100, 2000)).toBe(200);
    expect(batchFor(0.001, 1500, 2000)).toBe(2000);
  });

  it("keeps at least 25 jobs (or batchSize when smaller), however slow", () => {
    expect(batchFor(10, 2000, 2000)).toBe(25);
    expect(batchFor(10, 10, 10)).toBe(10);
  });

  it("reads batchSize from a store that returns at once (asynchronous: PostgreSQL)", () => {
    const cost = jobCostAfter(undefined, 2000, 0);
    expect(cost).toBe(0);
    expect(batchFor(cost, 2000, 2000)).toBe(2000);
  });

  it("believes a slower batch half way at once and a faster one only a quarter", () => {
    expect(jobCostAfter(undefined, 100, 4)).toBeCloseTo(0.04);
    // one batch held the loop 480 ms for 500 jobs (a checkpoint): half way up
    const spiked = jobCostAfter(0.04, 500, 480)!;
    expect(spiked).toBeCloseTo(0.5);
    expect(batchFor(spiked, 500, 2000)).toBe(40); // not 20 (as if every job cost 0.96 ms)
    // then fast batches bring it down a quarter of the way each
    expect(jobCostAfter(spiked, 40, 40 * 0.04)).toBeCloseTo(0.385);
    // a batch that read nothing says nothing
    expect(jobCostAfter(0.04, 0, 5)).toBe(0.04);
  });
});
