import { join } from "node:path";
import pino from "pino";
import { Scheduler } from "../../src/api/scheduler.js";
import type { SchedulerEvents } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import type { SchedulerOptions } from "../../src/engine/options.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { tempDir } from "./temp-dir.js";

export const silentLogger = pino({ level: "silent" });

/** A Scheduler on a fresh SQLite file, driven by a ManualClock. */
export function makeHarness(
  opts: Partial<Omit<SchedulerOptions, "store" | "clock">> & {
    bucketWidthMs?: number;
    start?: number;
  } = {},
) {
  const dir = tempDir();
  const { bucketWidthMs, start, ...schedulerOpts } = opts;
  const store = new SqliteStore({
    path: join(dir.path, "jobs.db"),
    ...(bucketWidthMs ? { bucketWidthMs } : {}),
  });
  const clock = new ManualClock(start ?? Date.UTC(2026, 2, 1, 10, 0, 0));
  const scheduler = new Scheduler({ store, clock, logger: silentLogger, ...schedulerOpts });
  return {
    store,
    clock,
    scheduler,
    dir: dir.path,
    async close() {
      await scheduler.stop({ timeoutMs: 1000 });
      await store.close();
      dir.cleanup();
    },
  };
}

/** Records every event of the given kinds, in order. */
export function record<K extends keyof SchedulerEvents>(scheduler: Scheduler, ...kinds: K[]) {
  const events: { kind: K; args: SchedulerEvents[K][0] }[] = [];
  for (const kind of kinds) {
    scheduler.on(kind, ((arg: SchedulerEvents[K][0]) => events.push({ kind, args: arg })) as never);
  }
  return events;
}
