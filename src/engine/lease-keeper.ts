import type { Clock } from "../core/clock.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";
import { WorkCost } from "./work-cost.js";

/** What one pass of the lease keeper did. */
export interface LeaseKeeperPass {
  /** Claims of this incarnation whose lease was extended (0 when nothing was held). */
  readonly renewed: number;
  /** Claims of an earlier incarnation of this node given back (pending again). */
  readonly released: number;
}

export interface LeaseKeeperDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Stable node name; earlier incarnations lease as `<nodeName>/<something>`. */
  readonly nodeName: string;
  /** Lease owner of this incarnation's claims. */
  readonly owner: string;
  readonly leaseMs: number;
  readonly renewIntervalMs: number;
  /** Jobs this process holds (claimed, not yet settled). */
  readonly held: () => number;
  /** Claims were given back: they are due, so the watcher should look now. */
  readonly onReleased: () => void;
  /** The node's loops that recover together (see LoopGroup). Default: none. */
  readonly loops?: LoopGroup;
  /**
   * The timing wheel's WheelDriver.quietFor: a renewal that would hold the event loop when
   * the wheel next fires runs right after that fire instead. Default: never waits.
   */
  readonly quietFor?: (ms: number) => Promise<void> | null;
}

/** Claims given back per statement; a pass repeats while a batch comes back full. */
const RELEASE_BATCH = 1000;

/**
 * The lease heartbeat of a node, and its restart release.
 *
 * While this process holds claims it extends all their leases every `renewIntervalMs`, in
 * one statement, so a lease can be short (a dead holder is noticed in seconds) and still
 * cover a job waiting in memory or a handler running for minutes.
 *
 * For one lease after it starts, it also gives back the claims an earlier incarnation of
 * the same node name left behind (a crash, a SIGKILL): pending again at their due time,
 * attempt not counted, instead of stranded until their leases run out. Only claims whose
 * renewals have stopped are taken, so a live process that shares the name by mistake keeps
 * its own: a claim counts as abandoned once it is 1.5 renewal intervals past its last
 * renewal, i.e. its lease ends at or before `now + leaseMs - 1.5 * renewIntervalMs` (which
 * assumes the earlier incarnation ran with the same lease settings; with a longer lease its
 * claims are taken later, never sooner). During that first lease the keeper looks every
 * half interval, so a predecessor's claims come back at most two intervals after its death.
 * After it, whatever is left has run out and the lease sweeper takes it.
 */
export class LeaseKeeper {
  private readonly loop: ServiceLoop;
  private startedAt = 0;
  private lastRenewAt = -Infinity;
  /** How long a renewal holds the event loop (the SQLite store's all of it), per claim held. */
  private readonly renewCost: WorkCost;

  constructor(private readonly d: LeaseKeeperDeps) {
    this.renewCost = new WorkCost(d.clock);
    this.loop = new ServiceLoop({
      name: "lease-keeper",
      clock: d.clock,
      logger: d.logger,
      group: d.loops,
      pass: () => this.pass(),
      // A failed renewal is retried well inside the lease.
      errorBackoffMs: { min: 100, max: Math.max(100, Math.floor(d.renewIntervalMs / 2)) },
    });
  }

  /**
   * Starts the loop. Its first pass comes one step later (half an interval while looking
   * for predecessors): the engine runs a pass by itself just before starting it.
   */
  start(): void {
    this.loop.start(this.nextDelay()); // a no-op while started
  }

  /**
   * Until when every claim this incarnation held at its last successful renewal is leased
   * (-Infinity before the first one).
   */
  get renewedUntil(): number {
    return this.lastRenewAt + this.d.leaseMs;
  }

  /** Where the look for an earlier incarnation's claims starts: the engine's start. */
  reset(): void {
    this.startedAt = this.d.clock.now();
    this.lastRenewAt = -Infinity;
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Renews (if anything is held and an interval has passed) and releases abandoned claims. */
  async runOnce(): Promise<LeaseKeeperPass> {
    const d = this.d;
    const now = d.clock.now();
    let renewed = 0;
    if (now - this.lastRenewAt >= d.renewIntervalMs && d.held() > 0) {
      renewed = await this.renewCost.timed(
        (n: number) => n,
        () => d.store.leasesRenew({ owner: d.owner, now, leaseMs: d.leaseMs }),
      );
      this.lastRenewAt = now;
    }
    let released = 0;
    if (this.lookingForPredecessors(now)) {
      const expiresBy = now + d.leaseMs - Math.ceil(1.5 * d.renewIntervalMs);
      for (;;) {
        const n = await d.store.leasesReleaseStale({
          ownerPrefix: `${d.nodeName}/`,
          exceptOwner: d.owner,
          expiresBy,
          now,
          limit: RELEASE_BATCH,
        });
        released += n;
        if (n < RELEASE_BATCH) break;
      }
    }
    if (released > 0) {
      d.logger.warn(
        { released, nodeName: d.nodeName },
        "gave back claims an earlier incarnation of this node left behind",
      );
      d.onReleased();
    }
    return { renewed, released };
  }

  private lookingForPredecessors(now: number): boolean {
    return now - this.startedAt <= this.d.leaseMs;
  }

  private async pass(): Promise<number> {
    // several renewals fit in a lease: waiting out one fire (a few ms) costs it nothing
    await this.d.quietFor?.(this.renewCost.estimateMs(this.d.held()));
    await this.runOnce();
    return this.nextDelay();
  }

  private nextDelay(): number {
    const interval = this.d.renewIntervalMs;
    return this.lookingForPredecessors(this.d.clock.now())
      ? Math.max(1, Math.floor(interval / 2))
      : interval;
  }
}
