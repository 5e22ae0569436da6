import type { Clock } from "../core/clock.js";
import type { Logger } from "./logger.js";
import { ServiceLoop } from "../core/loop.js";

/** A step of the wall clock that the monotonic clock did not take. */
export interface ClockJump {
  /** Size of the step in ms: positive forward, negative back. */
  readonly jumpMs: number;
  /** Wall time after the step (epoch ms), when it was noticed. */
  readonly at: number;
}

/** Jumps noticed by this process since it started. */
export interface ClockJumpSummary {
  readonly forward: number;
  readonly backward: number;
  /** The latest jump, or null. */
  readonly last: ClockJump | null;
}

/**
 * Notices wall-clock jumps: between two readings the wall clock (`now()`, what due times are
 * read against) should advance as far as the monotonic clock (what timers run on). A
 * difference of at least `thresholdMs` is a step (an operator, a VM resumed, NTP stepping
 * instead of slewing); smaller differences are drift and slewing, which timers absorb.
 *
 * Every reading rebases, so a jump is counted once and slow drift never adds up to one.
 * `check()` is cheap (two clock reads): the engine calls it on its timer wakes, and a
 * ServiceLoop calls it every `intervalMs` so a jump is noticed while the engine sleeps.
 * A clock without `monotonicNow` (a custom one) cannot be checked: nothing is reported.
 */
export class ClockJumpDetector {
  private readonly loop: ServiceLoop;
  private wall = 0;
  private mono = 0;
  private forward = 0;
  private backward = 0;
  private last: ClockJump | null = null;

  constructor(
    private readonly d: {
      readonly clock: Clock;
      readonly logger: Logger;
      /** Smallest difference reported as a jump, ms. */
      readonly thresholdMs: number;
      /** How often to check while nothing else wakes the engine, ms. */
      readonly intervalMs: number;
      /** Called once per jump, after it is logged. */
      readonly onJump: (jump: ClockJump) => void;
    },
  ) {
    this.rebase();
    this.loop = new ServiceLoop({
      name: "clock-jumps",
      clock: d.clock,
      logger: d.logger,
      pass: () => {
        this.check();
        return Promise.resolve(d.intervalMs);
      },
    });
  }

  get enabled(): boolean {
    return this.d.clock.monotonicNow !== undefined;
  }

  start(): void {
    if (!this.enabled) return;
    this.rebase();
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  summary(): ClockJumpSummary {
    return { forward: this.forward, backward: this.backward, last: this.last };
  }

  /** Compares both clocks since the last reading; reports and returns a jump, if any. */
  check(): ClockJump | null {
    const monotonicNow = this.d.clock.monotonicNow?.bind(this.d.clock);
    if (!monotonicNow) return null;
    const wall = this.d.clock.now();
    const mono = monotonicNow();
    const jumpMs = Math.round(wall - this.wall - (mono - this.mono));
    this.wall = wall;
    this.mono = mono;
    if (Math.abs(jumpMs) < this.d.thresholdMs) return null;
    const jump = { jumpMs, at: wall };
    if (jumpMs > 0) this.forward++;
    else this.backward++;
    this.last = jump;
    this.d.logger.warn(
      {
        jumpMs,
        direction: jumpMs > 0 ? "forward" : "back",
        wallClock: new Date(wall).toISOString(),
      },
      jumpMs > 0
        ? `wall clock jumped forward ${jumpMs} ms: jobs due in the skipped span fire now (on time by the wall clock, early by elapsed time)`
        : `wall clock jumped back ${-jumpMs} ms: jobs wait for their due time by the wall clock (late by elapsed time)`,
    );
    this.d.onJump(jump);
    return jump;
  }

  private rebase(): void {
    this.wall = this.d.clock.now();
    this.mono = this.d.clock.monotonicNow?.() ?? 0;
  }
}
