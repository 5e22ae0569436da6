import type { Clock } from "../core/clock.js";

/** Weight of the newest sample in the running means. */
const ALPHA = 0.3;
/** What an estimate is stretched by, and the ms added to it: a margin for a slower call. */
const STRETCH = 1.5;
const SLACK_MS = 2;

/**
 * How long a kind of store call holds the event loop, as a running mean of a fixed part and
 * a part per item: each call is made through `timed`, which times it until it returns its
 * promise (the SQLite store does all its work by then; PostgreSQL only sends), on the
 * engine's clock (its monotonic time when it has one). The watcher, the settler and the
 * lease keeper ask it, before a call, whether the call would still be running
 * when the timing wheel next fires (WheelDriver.quietFor): a claim of 500 series
 * occurrences held the loop 38 ms on a quiet machine, and one that started just before a
 * whole second made every job due on it that late. On a ManualClock no time passes inside
 * a call, so the estimate is the margin alone and tests stay deterministic.
 */
export class WorkCost {
  private baseMs = 0;
  private perItemMs = 0;
  private seenBase = false;
  private seenItems = false;
  private lastHeldMs = 0;

  constructor(private readonly clock: Clock) {}

  /** The ms the engine's clock reads now (monotonic when it can). */
  private now(): number {
    return this.clock.monotonicNow?.() ?? this.clock.now();
  }

  /**
   * Makes a store call and records how long it held the loop: from before `call` until it
   * returns its promise (after that the loop is free, whatever the store still does).
   * `items` is the call's size when known before it, recorded at once, or read from its
   * result once it resolves (a call that fails then is not recorded).
   */
  async timed<T>(items: number | ((result: T) => number), call: () => Promise<T>): Promise<T> {
    const started = this.now();
    const pending = call();
    const heldMs = this.now() - started;
    this.lastHeldMs = heldMs;
    if (typeof items === "number") {
      this.record(items, heldMs);
      return pending;
    }
    const result = await pending;
    this.record(items(result), heldMs);
    return result;
  }

  /** How long the last `timed` call held the loop, in ms (0 before any). */
  get lastMs(): number {
    return this.lastHeldMs;
  }

  /** A call over `items` items took `ms`. */
  record(items: number, ms: number): void {
    if (items <= 0) {
      this.baseMs = this.seenBase ? this.baseMs + ALPHA * (ms - this.baseMs) : ms;
      this.seenBase = true;
      return;
    }
    const perItem = Math.max(0, ms - this.baseMs) / items;
    this.perItemMs = this.seenItems ? this.perItemMs + ALPHA * (perItem - this.perItemMs) : perItem;
    this.seenItems = true;
  }

  /** How long a call over `items` items may hold the loop, margin included, in ms. */
  estimateMs(items: number): number {
    return STRETCH * (this.baseMs + this.perItemMs * items) + SLACK_MS;
  }

  /**
   * The most items a call may take to hold the loop `ms` on average (the running means, no
   * margin: a size aimed at a budget, not a promise to be over by then); Infinity while no
   * item was seen to cost anything (a store that returns at once: PostgreSQL).
   */
  itemsWithin(ms: number): number {
    if (this.perItemMs <= 0) return Infinity;
    return Math.floor(Math.max(0, ms - this.baseMs) / this.perItemMs);
  }
}
