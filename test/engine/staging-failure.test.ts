import { afterEach, describe, expect, it } from "vitest";
import { StorageFullError } from "../../src/core/errors.js";
import { makeHarness, record } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: ReturnType<typeof makeHarness>;
afterEach(async () => {
  await h?.close();
});

describe("a failing staging write (manual clock, real SQLite)", () => {
  it("does not stop the claim of jobs already staged", async () => {
    h = makeHarness();
    h.scheduler.handle("t", () => "ok");
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 5000, target: "t" });
    const fired = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advance(1); // the first pass stages the current bucket: the job is in hot
    const staged = await h.store.jobsNextDue({ now: T0 });
    expect(staged.earliestDue).toBe(T0 + 5000);

    // From now on every staging write fails, as on a disk with no space for it.
    let refused = 0;
    h.store.bucketsStage = () => {
      refused++;
      return Promise.reject(new StorageFullError("staging a bucket"));
    };
    for (let t = 0; t < 60 && fired.length === 0; t++) await h.clock.advance(100);
    // before: the pass threw at staging and never claimed, so the job waited for staging
    expect(refused).toBeGreaterThan(0);
    expect(fired.map((e) => e.args.job.id)).toEqual([job.id]);
    expect(fired[0]!.args.latenessMs).toBeLessThanOrEqual(100);
  });

  it("claims only below the earliest bucket still unstaged", async () => {
    h = makeHarness({ stageAheadMs: 0, horizonMs: 0 });
    h.scheduler.handle("t", () => "ok");
    // overdue jobs in two buckets: the older one staged, the newer one not yet
    const { job: older } = await h.scheduler.schedule({ dueAt: T0 - 2 * 3_600_000, target: "t" });
    await h.store.bucketsStage({ until: T0 - 2 * 3_600_000, maxRows: 1000 });
    await h.scheduler.schedule({ dueAt: T0 - 3_600_000, target: "t" });
    h.store.bucketsStage = () => Promise.reject(new StorageFullError("staging a bucket"));
    const claimed: string[] = [];
    const claim = h.store.jobsClaimDue.bind(h.store);
    h.store.jobsClaimDue = async (p) => {
      const jobs = await claim(p);
      claimed.push(...jobs.map((j) => j.id));
      return jobs;
    };
    const pass = await h.scheduler.runOnce();
    // the newer job's bucket is not staged: claiming it could pass over earlier jobs of it
    expect(claimed).toEqual([older.id]);
    expect(pass).toMatchObject({ staged: 0, claimed: 1 });
  });
});
