import type { Clock } from "./clock.js";
import type { Logger } from "./logger.js";
import { ServiceLoop, type LoopGroup, type ServiceLoopOptions } from "./loop.js";

/** What a PeriodicTask is made of. */
export interface PeriodicTaskOptions {
  readonly name: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Pause between passes in ms. */
  readonly intervalMs: number;
  /** See ServiceLoopOptions. Default 0. */
  readonly jitter?: number;
  /** See ServiceLoopOptions. Default 100 to 10,000 ms. */
  readonly errorBackoffMs?: ServiceLoopOptions["errorBackoffMs"];
  /** See ServiceLoopOptions. Default: none. */
  readonly group?: LoopGroup;
}

/**
 * A background task that runs `runOnce()` every `intervalMs` on a ServiceLoop (which logs a
 * failed pass and retries it with backoff): the shape of the lease sweeper, retention,
 * partition maintenance and shard-lease heartbeats.
 */
export abstract class PeriodicTask<Result> {
  private readonly loop: ServiceLoop;

  constructor(opts: PeriodicTaskOptions) {
    this.loop = new ServiceLoop({
      name: opts.name,
      clock: opts.clock,
      logger: opts.logger,
      ...(opts.jitter === undefined ? {} : { jitter: opts.jitter }),
      ...(opts.errorBackoffMs === undefined ? {} : { errorBackoffMs: opts.errorBackoffMs }),
      ...(opts.group === undefined ? {} : { group: opts.group }),
      pass: async () => {
        await this.runOnce();
        return opts.intervalMs;
      },
    });
  }

  /** Starts the passes: the first after `firstDelayMs` (default at once). */
  start(firstDelayMs = 0): void {
    this.loop.start(firstDelayMs);
  }

  /** Starts the passes with one at once; resolves when that one has ended (failed or not). */
  startNow(): Promise<void> {
    this.loop.start(null);
    return this.loop.runNow();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * Runs a pass now instead of at its planned time (while started); see ServiceLoop.runNow.
   */
  runNow(): Promise<void> {
    return this.loop.runNow();
  }

  /** One pass; resolves to what it did. */
  abstract runOnce(): Promise<Result>;
}
