import type { Clock } from "../core/clock.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import type { LoopGroup } from "../core/loop.js";
import { PeriodicTask } from "../core/periodic-task.js";

/**
 * Puts back jobs whose lease ran out (their worker died or hung): pending again at their
 * due time, or dead when no attempts are left. Batches until a batch comes back short,
 * time-boxed per pass.
 */
export class LeaseSweeper extends PeriodicTask<{ requeued: number; dead: number }> {
  constructor(
    private readonly d: {
      readonly store: Store;
      readonly clock: Clock;
      readonly logger: Logger;
      readonly intervalMs: number;
      readonly batchSize?: number;
      readonly onRequeued?: () => void;
      /** The node's loops that recover together (see LoopGroup). Default: none. */
      readonly loops?: LoopGroup;
    },
  ) {
    super({
      name: "lease-sweeper",
      clock: d.clock,
      logger: d.logger,
      intervalMs: d.intervalMs,
      group: d.loops,
    });
  }

  override async runOnce(): Promise<{ requeued: number; dead: number }> {
    const limit = this.d.batchSize ?? 1000;
    const started = Date.now();
    let requeued = 0;
    let dead = 0;
    for (;;) {
      const r = await this.d.store.leasesExpire({ now: this.d.clock.now(), limit });
      requeued += r.requeued;
      dead += r.dead;
      if (r.requeued + r.dead < limit || Date.now() - started > 1000) break;
    }
    if (requeued + dead > 0) {
      this.d.logger.warn({ requeued, dead }, "expired leases swept");
      if (requeued > 0) this.d.onRequeued?.();
    }
    return { requeued, dead };
  }
}
