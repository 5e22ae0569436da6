import type { Clock } from "../core/clock.js";
import type { Logger } from "./logger.js";
import { ServiceLoop } from "./loop.js";

/**
 * A background task that runs `runOnce()` every `intervalMs` on a ServiceLoop (which logs a
 * failed pass and retries it with backoff): the shape of the lease sweeper and retention.
 */
export abstract class PeriodicTask<Result> {
  private readonly loop: ServiceLoop;

  constructor(opts: { name: string; clock: Clock; logger: Logger; intervalMs: number }) {
    this.loop = new ServiceLoop({
      name: opts.name,
      clock: opts.clock,
      logger: opts.logger,
      pass: async () => {
        await this.runOnce();
        return opts.intervalMs;
      },
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass; resolves to what it did. */
  abstract runOnce(): Promise<Result>;
}
