import type { Clock, TimerHandle } from "../core/clock.js";
import type { Logger } from "./logger.js";

/**
 * A background loop: `pass()` does one bounded unit of work and says how long to wait
 * before the next one. Errors are logged and retried with a growing, jittered backoff, so a
 * database hiccup never kills the process. `wake()` runs the next pass as soon as the
 * current one ends; `stop()` resolves once no pass is running.
 */
export class ServiceLoop {
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  private started = false;
  private wakeRequested = false;
  /** Earliest wake asked for while a pass ran (it may have read state from before the ask). */
  private wakeRequestedAt: number | null = null;
  private failures = 0;
  private nextAt: number | null = null;

  constructor(
    private readonly opts: {
      readonly name: string;
      readonly clock: Clock;
      readonly logger: Logger;
      /** One pass; resolves to the delay in ms before the next pass. */
      readonly pass: () => Promise<number>;
      /** Backoff after a failed pass, in ms. Default 100 to 10,000. */
      readonly errorBackoffMs?: { min: number; max: number };
    },
  ) {}

  /** Starts the loop; its first pass runs after `firstDelayMs` (default at once). */
  start(firstDelayMs = 0): void {
    if (this.started) return;
    this.started = true;
    this.schedule(firstDelayMs);
  }

  async stop(): Promise<void> {
    this.started = false;
    this.clearTimer();
    await this.running;
  }

  /** Run a pass now (or right after the current one). */
  wake(): void {
    if (!this.started) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    this.schedule(0);
  }

  /** Bring the next pass forward to `at` if it is planned later. */
  wakeAt(at: number): void {
    if (!this.started) return;
    if (this.running) {
      this.wakeRequestedAt = Math.min(this.wakeRequestedAt ?? Infinity, at);
      return;
    }
    if (this.nextAt === null || at < this.nextAt) this.schedule(at - this.opts.clock.now());
  }

  private schedule(delayMs: number): void {
    this.clearTimer();
    const delay = Math.max(0, delayMs);
    this.nextAt = this.opts.clock.now() + delay;
    this.timer = this.opts.clock.setTimer(() => {
      this.timer = null;
      this.nextAt = null;
      this.running = this.runPass().finally(() => {
        this.running = null;
      });
    }, delay);
  }

  private async runPass(): Promise<void> {
    let delay: number;
    try {
      delay = await this.opts.pass();
      this.failures = 0;
    } catch (err) {
      this.failures++;
      const { min, max } = this.opts.errorBackoffMs ?? { min: 100, max: 10_000 };
      const base = Math.min(max, min * 2 ** (this.failures - 1));
      delay = base / 2 + Math.random() * (base / 2);
      this.opts.logger.error(
        { err, loop: this.opts.name, failures: this.failures, retryInMs: Math.round(delay) },
        `${this.opts.name} pass failed; retrying`,
      );
    }
    if (!this.started) return;
    if (this.wakeRequested) {
      this.wakeRequested = false;
      delay = 0;
    }
    if (this.wakeRequestedAt !== null) {
      delay = Math.min(delay, this.wakeRequestedAt - this.opts.clock.now());
      this.wakeRequestedAt = null;
    }
    this.schedule(delay);
  }

  private clearTimer(): void {
    if (this.timer) this.opts.clock.clearTimer(this.timer);
    this.timer = null;
    this.nextAt = null;
  }
}
