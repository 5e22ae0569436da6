import type { Clock, TimerHandle } from "./clock.js";
import type { Logger } from "./logger.js";

/** What a ServiceLoop is made of. */
export interface ServiceLoopOptions {
  /** Names the loop in its log lines. */
  readonly name: string;
  /** The engine's clock: every wait of the loop is a timer of it. */
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * One pass; resolves to the delay in ms before the next pass, or null to sleep until
   * `wake()` (a loop with nothing to do until something happens, such as a reconnect).
   */
  readonly pass: () => Promise<number | null>;
  /** Backoff after a failed pass, in ms. Default 100 to 10,000. */
  readonly errorBackoffMs?: { readonly min: number; readonly max: number };
  /**
   * Spread of each planned delay, as a fraction: 0.1 waits 0.9 to 1.1 of what the pass
   * asked for, so nodes started together do not stay in step. Default 0 (exact, as the
   * watcher needs for due times).
   */
  readonly jitter?: number;
  /** Random numbers in [0, 1) for the jitter and the backoff. Default Math.random. */
  readonly random?: () => number;
  /**
   * The loops that depend on the same thing as this one (a node's database): when one of
   * them passes again after failing, this one, if it is waiting out an error backoff,
   * retries at once. Default: none.
   */
  readonly group?: LoopGroup;
}

/**
 * Loops that fail together and recover together: those of one node on one database.
 *
 * During an outage each loop backs off on its own, up to its maximum (10 s by default), so
 * after the database comes back (a standby promoted, a restart) each would find out only
 * when its own retry came: the watcher could sleep out a 10 s backoff while the shard
 * heartbeat, retrying every second, already succeeds. In a group, the first member to pass
 * again after failing wakes every member still waiting out a backoff, so the node resumes
 * as soon as its most frequent prober gets through. Only a recovery (a pass after a failed
 * one) wakes anybody, and a woken loop that fails again keeps its growing backoff, so a
 * loop that keeps failing on its own is not hurried by the others' steady successes.
 */
export class LoopGroup {
  private readonly members = new Set<ServiceLoop>();

  /** Called by a member's start(). */
  join(loop: ServiceLoop): void {
    this.members.add(loop);
  }

  /** Called by a member's stop(). */
  leave(loop: ServiceLoop): void {
    this.members.delete(loop);
  }

  /** `from` passed after failing: the members waiting out a backoff retry now. */
  recovered(from: ServiceLoop): void {
    for (const m of this.members) if (m !== from) m.retryIfBackingOff();
  }
}

/**
 * A background loop: `pass()` does one bounded unit of work and says how long to wait
 * before the next one. Errors are logged and retried with a growing, jittered backoff, so a
 * database hiccup never kills the process. `wake()` runs the next pass as soon as the
 * current one ends; `stop()` resolves once no pass is running. Every engine loop and every
 * store loop (PostgreSQL's shard leases, partition maintenance, LISTEN reconnects) is one,
 * on the engine's clock, so a ManualClock drives them all.
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

  constructor(private readonly opts: ServiceLoopOptions) {}

  /**
   * Starts the loop; its first pass runs after `firstDelayMs` (default at once), or only on
   * `wake()` when null.
   */
  start(firstDelayMs: number | null = 0): void {
    if (this.started) return;
    this.started = true;
    this.opts.group?.join(this);
    if (firstDelayMs !== null) this.schedule(firstDelayMs);
  }

  async stop(): Promise<void> {
    this.started = false;
    this.opts.group?.leave(this);
    this.clearTimer();
    await this.running;
  }

  /**
   * Runs a pass at once, without waiting for a timer (a first heartbeat the caller needs
   * done, a reconnect), and resolves when it has ended; while one runs, asks for another
   * right after it and resolves when the current one ends. A failure is the loop's as
   * usual: logged, retried after the backoff.
   */
  runNow(): Promise<void> {
    if (!this.started) return Promise.resolve();
    if (this.running) {
      this.wakeRequested = true;
      return this.running;
    }
    this.clearTimer();
    const run = this.runPass().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
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

  /**
   * Runs the next pass now if the loop is waiting out an error backoff (another loop of its
   * group got through: what failed here may work again); otherwise does nothing.
   */
  retryIfBackingOff(): void {
    if (!this.started || this.failures === 0 || this.running) return;
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
      const run = this.runPass().finally(() => {
        if (this.running === run) this.running = null;
      });
      this.running = run;
    }, delay);
  }

  private async runPass(): Promise<void> {
    let delay: number | null;
    const random = this.opts.random ?? Math.random;
    try {
      delay = await this.opts.pass();
      const recovered = this.failures > 0;
      this.failures = 0;
      if (recovered) this.opts.group?.recovered(this);
      const jitter = this.opts.jitter ?? 0;
      // Whole ms: times derived from the clock are written as bigint epoch ms.
      if (delay !== null && jitter > 0)
        delay = Math.round(delay * (1 + jitter * (2 * random() - 1)));
    } catch (err) {
      this.failures++;
      const { min, max } = this.opts.errorBackoffMs ?? { min: 100, max: 10_000 };
      const base = Math.min(max, min * 2 ** (this.failures - 1));
      delay = Math.round(base / 2 + random() * (base / 2));
      this.opts.logger.error(
        { err, loop: this.opts.name, failures: this.failures, retryInMs: delay },
        `${this.opts.name} pass failed; retrying`,
      );
    }
    if (!this.started) return;
    if (this.wakeRequested) {
      this.wakeRequested = false;
      delay = 0;
    }
    if (this.wakeRequestedAt !== null) {
      delay = Math.min(delay ?? Infinity, this.wakeRequestedAt - this.opts.clock.now());
      this.wakeRequestedAt = null;
    }
    if (delay !== null) this.schedule(delay);
  }

  private clearTimer(): void {
    if (this.timer) this.opts.clock.clearTimer(this.timer);
    this.timer = null;
    this.nextAt = null;
  }
}
