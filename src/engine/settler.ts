import type { Clock } from "../core/clock.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";
import type { Settlement, Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import { WorkCost } from "./work-cost.js";

export interface SettlerDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Settlements done with: written (applied or not), refused or given up. */
  readonly onDone?: (settlements: readonly Settlement[]) => void;
  /** The node's loops that recover together (see LoopGroup). */
  readonly loops?: LoopGroup;
  /**
   * The timing wheel's WheelDriver.quietFor: a batch that would hold the event loop when
   * the wheel next fires is written right after that fire instead. Default: never waits.
   */
  readonly quietFor?: (ms: number) => Promise<void> | null;
  /** Most settlements one write takes. Default 1000. */
  readonly maxBatch?: number;
}

interface Waiting {
  settlement: Settlement;
  resolve: (applied: boolean) => void;
  /** Resolved already (given up while its write was under way): reported once. */
  done?: boolean;
}

/** Backoff between attempts at a failed write, ms: 50-100 after the first, up to 2.5-5 s. */
const RETRY_BACKOFF_MS = { min: 100, max: 5000 };

/**
 * Batches acknowledgements: settlements made in the same turn of the event loop are written
 * in one transaction (one `jobsSettle` call), which is what lets a single SQLite file fire
 * tens of thousands of jobs a second. The writes are the passes of a ServiceLoop run at once
 * (`runNow`, no timer), so a failed write is logged and retried with the loops' backoff on
 * the engine's clock; the settlements are kept meanwhile, and if a lease runs out first the
 * fencing token makes the late write a no-op (the job fires again: at-least-once).
 */
export class Settler {
  private queue: Waiting[] = [];
  /** The batch being written. */
  private writing: Waiting[] = [];
  private scheduled = false;
  /** The last write failed: its retry waits for the backoff (a new settlement does not hurry it). */
  private failing = false;
  /** Resolved whenever a pass leaves nothing queued or being written. */
  private drainedWaiters: (() => void)[] = [];
  private readonly loop: ServiceLoop;
  /** The error of the last failed write, for what stop() reports. */
  lastError: unknown = null;

  private readonly store: Store;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly onDone: (settlements: readonly Settlement[]) => void;
  private readonly maxBatch: number;
  /** How long a write holds the event loop (the SQLite store's all of it). */
  private readonly cost: WorkCost;

  constructor(private readonly d: SettlerDeps) {
    this.store = d.store;
    this.clock = d.clock;
    this.logger = d.logger;
    this.onDone = d.onDone ?? (() => {});
    this.maxBatch = d.maxBatch ?? 1000;
    this.cost = new WorkCost(d.clock);
    this.loop = new ServiceLoop({
      name: "settler",
      clock: d.clock,
      logger: d.logger,
      errorBackoffMs: RETRY_BACKOFF_MS,
      group: d.loops,
      pass: () => this.writeAll(),
    });
    this.loop.start(null);
  }

  /** Set by close(): settlements are refused (resolve false), failed writes not retried. */
  private closed = false;

  /**
   * Refuses settlements from now on (the engine stopped; its store may close): a late one
   * resolves false at once and is logged, and a write failing now is given up, not retried
   * forever against a closed store (whose retry timer would keep the process alive). The
   * claims concerned come back by lease, or at once when this node name starts again.
   */
  close(): void {
    this.closed = true;
    void this.loop.stop();
  }

  /** Accepts settlements again (the engine started again). */
  open(): void {
    this.closed = false;
    this.loop.start(null);
  }

  /** Resolves to true when the settlement applied (the claim was still ours). */
  settle(settlement: Settlement): Promise<boolean> {
    if (this.closed) {
      this.logger.warn(
        { id: settlement.id, outcome: settlement.outcome },
        "settlement after the scheduler stopped; not recorded (the claim comes back by lease)",
      );
      this.onDone([settlement]);
      return Promise.resolve(false);
    }
    // Never written here, even with a full batch queued: the settlement is made while a fire
    // instant's handlers are starting, and a write now would hold the rest of them back.
    return new Promise<boolean>((resolve) => {
      this.queue.push({ settlement, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.kick();
        });
      }
    });
  }

  /**
   * Writes everything queued; resolves when nothing is left. With `timeoutMs` (stop()'s
   * bound), gives up on what is still unwritten after that long (the store unavailable):
   * those settlements resolve false, the settler closes, and their jobs stay claimed until
   * their leases run out (or this node name starts again). Resolves to how many it gave up.
   */
  async flush(timeoutMs?: number): Promise<number> {
    if (this.queue.length === 0 && this.writing.length === 0) return 0;
    const drained = new Promise<void>((r) => this.drainedWaiters.push(r));
    this.kick();
    if (timeoutMs === undefined) {
      await drained;
      return 0;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return late ? this.giveUp() : 0;
  }

  /** Starts a write now, unless one runs (it takes what is queued) or a retry waits. */
  private kick(): void {
    if (!this.failing) void this.loop.runNow();
  }

  /**
   * One pass: writes batch after batch until nothing is queued; throws on a failed write.
   * A batch that would still hold the event loop when the timing wheel next fires waits
   * for that fire to be over (quietFor), so jobs due then start on time.
   */
  private async writeAll(): Promise<null> {
    while (this.queue.length > 0) {
      await this.d.quietFor?.(this.cost.estimateMs(Math.min(this.queue.length, this.maxBatch)));
      const batch = this.queue.splice(0, this.maxBatch);
      if (batch.length === 0) break;
      this.writing = batch;
      let applied: boolean[];
      try {
        applied = await this.cost.timed(batch.length, () =>
          this.store.jobsSettle({
            now: this.clock.now(),
            settlements: batch.map((w) => w.settlement),
          }),
        );
      } catch (err) {
        this.writing = [];
        this.lastError = err;
        if (this.closed) {
          const dropped = [...batch, ...this.queue.splice(0)];
          this.logger.error(
            { err, dropped: dropped.length },
            "settling jobs failed after the scheduler stopped; not retried (claims come back by lease)",
          );
          this.finish(dropped, () => false);
          this.failing = false;
          this.drained();
          return null;
        }
        this.queue.unshift(...batch);
        this.failing = true;
        throw new Error(`settling ${this.queue.length} jobs`, { cause: err });
      }
      this.writing = [];
      this.finish(batch, (i) => applied[i] ?? false);
    }
    this.failing = false;
    this.drained();
    return null;
  }

  /** Gives up on everything unwritten (see flush); returns how many. */
  private giveUp(): number {
    const given = [...this.writing, ...this.queue];
    this.writing = [];
    this.queue = [];
    this.closed = true;
    this.failing = false;
    void this.loop.stop(); // its retry timer, if any, goes; a write under way is not awaited
    this.finish(given, () => false);
    this.drained();
    return given.length;
  }

  private finish(batch: readonly Waiting[], applied: (i: number) => boolean): void {
    const open = batch.filter((w) => !w.done);
    if (open.length === 0) return;
    this.onDone(open.map((w) => w.settlement));
    batch.forEach((w, i) => {
      if (w.done) return;
      w.done = true;
      w.resolve(applied(i));
    });
  }

  private drained(): void {
    if (this.queue.length > 0 || this.writing.length > 0) return;
    const waiters = this.drainedWaiters;
    this.drainedWaiters = [];
    for (const w of waiters) w();
  }
}
