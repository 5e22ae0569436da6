import { Scheduler } from "./api/scheduler.js";
import type { SchedulerOptions } from "./engine/options.js";
import { openStore, type OpenStoreOptions } from "./stores/open-store.js";

export type CreateSchedulerOptions = Omit<SchedulerOptions, "store"> &
  OpenStoreOptions & {
    /** SQLite file path or postgres:// URL. Required. */
    readonly db: string;
  };

/** Opens the store named by `db` and builds a Scheduler on it (`close()` closes both). */
export async function createScheduler(options: CreateSchedulerOptions): Promise<Scheduler> {
  const { db, bucketGranularity, backgroundCheckpoints, ...rest } = options;
  const store = await openStore(db, {
    ...(bucketGranularity === undefined ? {} : { bucketGranularity }),
    ...(backgroundCheckpoints === undefined ? {} : { backgroundCheckpoints }),
  });
  return new Scheduler({ ...rest, store });
}
