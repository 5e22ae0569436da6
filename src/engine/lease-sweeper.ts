import type { Clock } from "../core/clock.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";

/** What one sweep did. */
export interface SweepResult {
  readonly requeued: number;
  readonly dead: number;
  /** Earliest lease still running after the sweep (any node's), or null when none is. */
  readonly nextExpiresAt: number | null;
}

/**
 * Shortest pause between sweeps while a lease is about to end, ms: a lease read as ending
 * now but locked by another node's sweeper is gone a moment later, not worth a spin.
 */
const MIN_PAUSE_MS = 50;

/**
 * Puts back jobs whose lease ran out (their worker died or hung): pending again at their
 * due time, or dead when no attempts are left. Batches until a batch comes back short,
 * time-boxed per pass.
 *
 * It sleeps until the earliest lease it knows of can have run out, not on a fixed beat:
 * each sweep reads the earliest lease still running (any node's), and each claim of this
 * node brings the next sweep forward to its lease's end (`leaseTaken`). With nothing
 * claimed anywhere it sweeps only every `maxIdleMs`, for claims other nodes made since it
 * last looked (their own sweepers and the dead-node takeover cover those first, see
 * docs/reliability.md); `wake()` sweeps at once (a dead node's leases were ended).
 */
export class LeaseSweeper {
  private readonly loop: ServiceLoop;

  constructor(
    private readonly d: {
      readonly store: Store;
      readonly clock: Clock;
      readonly logger: Logger;
      /** Longest pause between sweeps, ms. */
      readonly maxIdleMs: number;
      readonly batchSize?: number;
      readonly onRequeued?: () => void;
      /** The node's loops that recover together (see LoopGroup). Default: none. */
      readonly loops?: LoopGroup;
    },
  ) {
    this.loop = new ServiceLoop({
      name: "lease-sweeper",
      clock: d.clock,
      logger: d.logger,
      pass: () => this.pass(),
      group: d.loops,
    });
  }

  /** Starts sweeping, the first sweep at once. */
  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** A claim leased until `expiresAt` was taken: sweep then, if that is sooner than planned. */
  leaseTaken(expiresAt: number): void {
    this.loop.wakeAt(expiresAt);
  }

  /** Sweep now (or right after the sweep under way). */
  wake(): void {
    this.loop.wake();
  }

  async runOnce(): Promise<SweepResult> {
    return (await this.sweep()).result;
  }

  private async sweep(): Promise<{ result: SweepResult; more: boolean }> {
    const limit = this.d.batchSize ?? 1000;
    const started = Date.now();
    let requeued = 0;
    let dead = 0;
    let more = false;
    let nextExpiresAt: number | null = null;
    for (;;) {
      const r = await this.d.store.leasesExpire({ now: this.d.clock.now(), limit });
      requeued += r.requeued;
      dead += r.dead;
      nextExpiresAt = r.nextExpiresAt;
      more = r.requeued + r.dead >= limit;
      if (!more || Date.now() - started > 1000) break;
    }
    if (requeued + dead > 0) {
      this.d.logger.warn({ requeued, dead }, "expired leases swept");
      // requeued jobs are due now, and so are the callbacks a dead one may have written
      this.d.onRequeued?.();
    }
    return { result: { requeued, dead, nextExpiresAt }, more };
  }

  /** One sweep, then the pause until the earliest known lease can end (at most maxIdleMs). */
  private async pass(): Promise<number> {
    const { result, more } = await this.sweep();
    if (more) return 0;
    const untilNext =
      result.nextExpiresAt === null ? Infinity : result.nextExpiresAt - this.d.clock.now();
    return Math.min(this.d.maxIdleMs, Math.max(MIN_PAUSE_MS, untilNext));
  }
}
