import type { Clock } from "../core/clock.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";

/** Longest a pass spends on one kind of row, in ms: it never competes with firing for long. */
const PASS_BUDGET_MS = 500;

/**
 * Removes history (succeeded, dead, cancelled, expired jobs, and pauses resumed) older than
 * `retentionMs` and change feed rows older than `changeRetentionMs`, in bulk batches,
 * time-boxed per pass: a pass every `intervalMs`, the first at start().
 */
export class Retention {
  private readonly loop: ServiceLoop;

  constructor(
    private readonly d: {
      readonly store: Store;
      readonly clock: Clock;
      readonly logger: Logger;
      readonly retentionMs: number;
      readonly changeRetentionMs: number;
      readonly intervalMs: number;
      readonly batchSize?: number;
      /** The node's loops that recover together (see LoopGroup). Default: none. */
      readonly loops?: LoopGroup;
    },
  ) {
    this.loop = new ServiceLoop({
      name: "retention",
      clock: d.clock,
      logger: d.logger,
      ...(d.loops === undefined ? {} : { group: d.loops }),
      pass: async () => {
        await this.runOnce();
        return this.d.intervalMs;
      },
    });
  }

  /** Starts the passes, the first at once. */
  start(): void {
    this.loop.start(0);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Purges one time-boxed pass of each; returns how many jobs were removed. */
  async runOnce(): Promise<number> {
    const before = this.d.clock.now() - this.d.retentionMs;
    const removed = await this.batches((limit) => this.d.store.historyPurge({ before, limit }));
    if (removed > 0) this.d.logger.info({ removed }, "retention removed finished jobs");
    await this.purgePauses(before);
    await this.purgeChanges();
    return removed;
  }

  /** Resumed pauses are history like finished jobs: kept as long, then removed. */
  private async purgePauses(before: number): Promise<void> {
    const pauses = this.d.store.pauses;
    if (!pauses) return;
    const removed = await this.batches((limit) => pauses.pausesPurge({ before, limit }));
    if (removed > 0) this.d.logger.info({ removed }, "retention removed resumed pauses");
  }

  /** One time-boxed pass over the change feed; returns how many changes were removed. */
  async purgeChanges(): Promise<number> {
    const before = this.d.clock.now() - this.d.changeRetentionMs;
    const removed = await this.batches((limit) => this.d.store.changesPurge({ before, limit }));
    if (removed > 0) this.d.logger.info({ removed }, "retention removed old changes");
    return removed;
  }

  private async batches(purge: (limit: number) => Promise<number>): Promise<number> {
    const limit = this.d.batchSize ?? 5000;
    const started = Date.now();
    let removed = 0;
    for (;;) {
      const n = await purge(limit);
      removed += n;
      if (n < limit || Date.now() - started > PASS_BUDGET_MS) return removed;
    }
  }
}
