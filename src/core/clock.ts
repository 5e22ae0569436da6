/**
 * Time is injected: the engine reads `now()` and sets timers only through a Clock, so tests
 * drive time with a ManualClock instead of sleeping until a job is due.
 */
export interface Clock {
  /** Current time, epoch ms: the wall clock, which due times are read against. */
  now(): number;
  /**
   * Optional: a monotonic time in ms (any origin) that no wall-clock step moves, the time
   * timers run on. With it the engine detects wall-clock jumps (see clock-jumps.ts).
   */
  monotonicNow?(): number;
  /** Calls `fn` after `delayMs` (>= 0). Returns a handle for `clearTimer`. */
  setTimer(fn: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

/**
 * The real clock: Date.now and setTimeout. Timers are not unref'd: a started scheduler keeps
 * the process alive, as a server would, until `stop()` clears them. A timer due now runs on
 * setImmediate: setTimeout(0) waits a whole millisecond, which a watcher claiming batch
 * after batch paid on every pass (a sixth of its time on a fast store).
 */
export function systemClock(): Clock {
  const timers = new Map<number, NodeJS.Timeout | NodeJS.Immediate>();
  let next = 1;
  return {
    now: () => Date.now(),
    monotonicNow: () => performance.now(),
    setTimer(fn, delayMs) {
      const id = next++;
      const run = (): void => {
        timers.delete(id);
        fn();
      };
      timers.set(id, delayMs < 1 ? setImmediate(run) : setTimeout(run, delayMs));
      return { id };
    },
    clearTimer(handle) {
      const t = timers.get(handle.id);
      if (t === undefined) return;
      if ("refresh" in t) clearTimeout(t);
      else clearImmediate(t);
      timers.delete(handle.id);
    },
  };
}

interface ManualTimer {
  id: number;
  /** Monotonic time it is due at. */
  at: number;
  fn: () => void;
}

/** Options of a ManualClock. */
export interface ManualClockOptions {
  /**
   * Awaited before each timer an `advance` fires and once at its end, so the work a timer
   * started finishes first. Default: five turns of the event loop, enough for a store in
   * this process (SQLite); a store over a network wants to wait for its calls in flight.
   */
  readonly settle?: () => Promise<void>;
}

/**
 * A clock that only moves when told. `advance(ms)` fires every timer due in that span in
 * time order, letting pending promises settle between timers, so engine passes that a
 * timer starts can complete before the next one fires.
 *
 * As on a real machine, timers run on the monotonic time: `jump(ms)` steps the wall clock
 * alone (an operator or NTP setting the time), moving no timer, so a test can reproduce
 * what a clock jump does to a running scheduler.
 */
export class ManualClock implements Clock {
  private current: number;
  /** Wall minus monotonic time: changed only by `jump`. */
  private offset: number;
  private timers: ManualTimer[] = [];
  private nextId = 1;
  private readonly settle: () => Promise<void>;

  constructor(start: number = Date.UTC(2026, 0, 1), options: ManualClockOptions = {}) {
    this.current = start;
    this.offset = start;
    this.settle = options.settle ?? (() => settle());
  }

  now(): number {
    return this.current;
  }

  monotonicNow(): number {
    return this.current - this.offset;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const timer = { id: this.nextId++, at: this.monotonicNow() + Math.max(0, delayMs), fn };
    this.timers.push(timer);
    return { id: timer.id };
  }

  clearTimer(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle.id);
  }

  /** Number of timers waiting. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing due timers in order and settling work between them. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.current + ms);
  }

  /** Moves time forward to wall time `target` (see `advance`). */
  async advanceTo(target: number): Promise<void> {
    for (;;) {
      await this.settle();
      const targetMono = target - this.offset;
      const due = this.timers
        .filter((t) => t.at <= targetMono)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at + this.offset);
      due.fn();
    }
    this.current = Math.max(this.current, target);
    await this.settle();
  }

  /**
   * Sets the time without firing timers, as after downtime: wall and monotonic time move
   * together (a process that was not running sees no jump). Timers already due fire on the
   * next `advance`.
   */
  set(time: number): void {
    this.current = time;
  }

  /**
   * Steps the wall clock by `ms` (negative: back) while the monotonic time and the timers
   * stay where they are: a clock jump as a running process sees it.
   */
  jump(ms: number): void {
    this.current += ms;
    this.offset += ms;
  }
}

/** Lets queued promise callbacks and I/O callbacks run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}
