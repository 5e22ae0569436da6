import { describe, expect, it } from "vitest";
import { nextBatch } from "../../src/engine/operation-runner.js";

// The runner's time-box (HOLD_BUDGET_MS 20, MIN_BATCH 100): a batch that held the event loop
// past the budget shrinks its operation's next batch, so firing is not stalled behind it.
describe("operation batch sizes", () => {
  it("shrinks a batch that held the event loop past the budget to what fits in it", () => {
    // 2,000 jobs in 80 ms: 40 us a job, 500 fit in 20 ms
    expect(nextBatch(2000, 2000, 80, 2000)).toBe(500);
  });

  it("grows back at most twofold, and never past batchSize", () => {
    expect(nextBatch(500, 500, 1, 2000)).toBe(1000);
    expect(nextBatch(1000, 1000, 1, 2000)).toBe(2000);
    expect(nextBatch(2000, 2000, 1, 2000)).toBe(2000);
  });

  it("keeps at least 100 jobs (or batchSize when smaller)", () => {
    expect(nextBatch(2000, 2000, 10_000, 2000)).toBe(100);
    expect(nextBatch(10, 10, 10_000, 10)).toBe(10);
  });

  it("keeps the size when the store returned at once (async: PostgreSQL) or read nothing", () => {
    expect(nextBatch(2000, 2000, 0, 2000)).toBe(2000);
    expect(nextBatch(700, 0, 50, 2000)).toBe(700);
  });
});
