import type { Clock } from "../core/clock.js";
import type { Logger } from "./logger.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";

/** One comparison of this node's clock with the store's. */
export interface ClockSkewReading {
  /** This node's clock minus the store's, ms: positive when this node is ahead. */
  readonly skewMs: number;
  /** Round trip of the reading, ms: the skew is known to within half of it. */
  readonly roundTripMs: number;
  /** When it was read, by this node's clock (epoch ms). */
  readonly at: number;
}

/**
 * Compares this node's clock with the store's (PostgreSQL: `clock_timestamp()`) when the
 * engine starts and every `intervalMs`, and warns when they differ by more than `warnMs`.
 * Nodes sharing one database read due times, leases and shard leases against their own
 * clocks: a node ahead of the others fires early by their clocks and takes over their
 * shard leases before those run out. The database's clock is the common reference.
 *
 * The skew is the node's time at the middle of the round trip minus the database's answer;
 * a reading is trusted only to within half its round trip, which the warning includes.
 */
export class ClockSkewCheck {
  private readonly loop: ServiceLoop;
  private latest: ClockSkewReading | null = null;

  constructor(
    private readonly d: {
      readonly clock: Clock;
      readonly logger: Logger;
      /** The store's current time, epoch ms. */
      readonly storeNow: () => Promise<number>;
      /** Skew above which a warning is logged, ms. */
      readonly warnMs: number;
      readonly intervalMs: number;
      /** The node's loops that recover together (see LoopGroup). Default: none. */
      readonly loops?: LoopGroup;
    },
  ) {
    this.loop = new ServiceLoop({
      name: "clock-skew",
      clock: d.clock,
      logger: d.logger,
      group: d.loops,
      pass: async () => {
        await this.runOnce();
        return d.intervalMs;
      },
    });
  }

  /** The latest reading, or null before the first one. */
  get last(): ClockSkewReading | null {
    return this.latest;
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Reads both clocks once, warns when they differ by more than `warnMs`. */
  async runOnce(): Promise<ClockSkewReading> {
    const before = this.d.clock.now();
    const storeNow = await this.d.storeNow();
    const after = this.d.clock.now();
    const reading = {
      skewMs: Math.round((before + after) / 2 - storeNow),
      roundTripMs: after - before,
      at: after,
    };
    this.latest = reading;
    if (Math.abs(reading.skewMs) > this.d.warnMs) {
      this.d.logger.warn(
        { ...reading, warnMs: this.d.warnMs },
        `this node's clock is ${Math.abs(reading.skewMs)} ms ${reading.skewMs > 0 ? "ahead of" : "behind"} the database's (more than ${this.d.warnMs} ms): jobs fire early or late by the other nodes' clocks; fix the time sync (NTP)`,
      );
    }
    return reading;
  }
}
