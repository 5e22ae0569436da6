import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { tempDir } from "../support/temp-dir.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const dir = tempDir();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
afterAll(() => dir.cleanup());

describe("the shards option on SQLite", () => {
  it("fires only jobs of the shards it returns; the others stay pending for their owner", async () => {
    const store = new SqliteStore({ path: join(dir.path, "shards.db"), shardCount: 4 });
    open.push(store);
    const clock = new ManualClock(T0);
    const mine = [0, 3];
    const scheduler = new Scheduler({ store, clock, logger: silentLogger, shards: () => mine });
    open.push({ close: () => scheduler.stop({ timeoutMs: 1000 }) });
    const fired: number[] = [];
    scheduler.handle("t", async (job) => {
      fired.push(job.shard);
    });
    const jobs = await scheduler.scheduleMany(
      Array.from({ length: 80 }, (_, i) => ({ dueAt: T0 + 10 + i, target: "t" })),
    );
    const ofMine = jobs.filter((r) => mine.includes(r.job.shard)).length;
    expect(ofMine).toBeGreaterThan(0);
    expect(ofMine).toBeLessThan(80);
    scheduler.start();
    await clock.advance(1000);
    await scheduler.idle();
    expect(fired.length).toBe(ofMine);
    expect(fired.every((s) => mine.includes(s))).toBe(true);
    expect((await scheduler.stats()).counts).toMatchObject({
      succeeded: ofMine,
      pending: 80 - ofMine,
    });
  });
});
