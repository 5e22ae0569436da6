import type { Clock } from "../core/clock.js";
import type { Settlement, Store } from "../store/store.js";
import type { Logger } from "./logger.js";

interface Waiting {
  settlement: Settlement;
  resolve: (applied: boolean) => void;
}

/**
 * Batches acknowledgements: settlements made in the same turn of the event loop are written
 * in one transaction (one `jobsSettle` call), which is what lets a single SQLite file fire
 * tens of thousands of jobs a second. A failed write is retried with backoff; the
 * settlements are kept meanwhile, and if a lease runs out first the fencing token makes the
 * late write a no-op (the job fires again: at-least-once).
 */
export class Settler {
  private queue: Waiting[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** Settlements done with: written (applied or not) or refused. */
    private readonly onDone: (settlements: readonly Settlement[]) => void = () => {},
    private readonly maxBatch = 1000,
  ) {}

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
  }

  /** Accepts settlements again (the engine started again). */
  open(): void {
    this.closed = false;
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
    return new Promise<boolean>((resolve) => {
      this.queue.push({ settlement, resolve });
      if (this.queue.length >= this.maxBatch) void this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          void this.flush();
        });
      }
    });
  }

  /** Writes everything queued; resolves when the queue is empty. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    this.flushing = this.writeAll().finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private async writeAll(): Promise<void> {
    let failures = 0;
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.maxBatch);
      try {
        const applied = await this.store.jobsSettle({
          now: this.clock.now(),
          settlements: batch.map((w) => w.settlement),
        });
        this.queue.splice(0, batch.length);
        this.onDone(batch.map((w) => w.settlement));
        batch.forEach((w, i) => w.resolve(applied[i] ?? false));
        failures = 0;
      } catch (err) {
        if (this.closed) {
          this.logger.error(
            { err, dropped: this.queue.length },
            "settling jobs failed after the scheduler stopped; not retried (claims come back by lease)",
          );
          const dropped = this.queue.splice(0);
          this.onDone(dropped.map((w) => w.settlement));
          for (const w of dropped) w.resolve(false);
          return;
        }
        failures++;
        const delay = Math.min(5000, 50 * 2 ** failures);
        this.logger.error(
          { err, pending: this.queue.length, retryInMs: delay },
          "settling jobs failed; retrying",
        );
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }
}
