import type { Clock } from "../core/clock.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import type { LoopGroup } from "../core/loop.js";
import { PeriodicTask } from "../core/periodic-task.js";

/**
 * Removes history (succeeded, dead, cancelled, expired jobs) older than `retentionMs`, in
 * bulk batches, time-boxed per pass so it never competes with firing for long.
 */
export class Retention extends PeriodicTask<number> {
  constructor(
    private readonly d: {
      readonly store: Store;
      readonly clock: Clock;
      readonly logger: Logger;
      readonly retentionMs: number;
      readonly intervalMs: number;
      readonly batchSize?: number;
      /** The node's loops that recover together (see LoopGroup). Default: none. */
      readonly loops?: LoopGroup;
    },
  ) {
    super({
      name: "retention",
      clock: d.clock,
      logger: d.logger,
      intervalMs: d.intervalMs,
      group: d.loops,
    });
  }

  /** Purges one time-boxed pass; returns how many jobs were removed. */
  override async runOnce(): Promise<number> {
    const limit = this.d.batchSize ?? 5000;
    const before = this.d.clock.now() - this.d.retentionMs;
    const started = Date.now();
    let removed = 0;
    for (;;) {
      const n = await this.d.store.historyPurge({ before, limit });
      removed += n;
      if (n < limit || Date.now() - started > 500) break;
    }
    if (removed > 0) this.d.logger.info({ removed }, "retention removed finished jobs");
    return removed;
  }
}
