import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { OutcomesNotRecordedError } from "../../src/core/errors.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { expectHeldUntilLease, gatedHandler } from "../support/jobs.js";
import { tempDir } from "../support/temp-dir.js";

/**
 * Issue 11 §4: the settler retried a failed write forever, so close() hung while the store
 * was unavailable, whatever its timeout said. Now the retries wait on the engine's clock and
 * stop() gives up on them at its timeout (at least 1 s after the handlers), reports how many
 * outcomes were not recorded, and leaves their jobs to their leases. A real SQLite file made
 * unavailable: another connection holds its write lock.
 */
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

describe("stop() with the SQLite file locked by another writer", () => {
  it("returns within its bound, reports the unrecorded outcome, and the job comes back after its lease", async () => {
    const dir = tempDir();
    const path = join(dir.path, "jobs.db");
    const store = new SqliteStore({ path, busyTimeoutMs: 20 });
    const clock = new ManualClock(T0);
    const scheduler = new Scheduler({ store, clock, logger: silentLogger, leaseMs: 60_000 });
    const { started, finish } = gatedHandler(scheduler);
    const { job } = await scheduler.schedule({ dueAt: T0 + 10, target: "t" });
    const locker = new Database(path);
    try {
      scheduler.start();
      await clock.advanceTo(T0 + 10);
      await started;
      locker.exec("BEGIN EXCLUSIVE"); // another process holds the write lock from now on
      finish(); // the handler returns: its outcome cannot be written while the lock is held

      const began = Date.now();
      const closed = await scheduler.close({ timeoutMs: 200 }).then(
        () => null,
        (err: unknown) => err,
      );
      const tookMs = Date.now() - began;
      expect(closed).toBeInstanceOf(OutcomesNotRecordedError);
      expect((closed as OutcomesNotRecordedError).count).toBe(1);
      // the store's own error, for the operator
      expect(String((closed as Error).cause)).toMatch(/lock|busy/i);
      // the timeout, the least time given to the last writes (1 s), and slack
      expect(tookMs).toBeLessThan(200 + 1000 + 3000);
      console.log(`close() with the file locked returned after ${tookMs} ms`);
    } finally {
      locker.exec("COMMIT");
      locker.close();
    }
    // The job is still claimed until its lease runs out; then the sweep puts it back.
    const after = new SqliteStore({ path });
    try {
      await expectHeldUntilLease(after, job.id);
    } finally {
      await after.close();
      dir.cleanup();
    }
  });
});
