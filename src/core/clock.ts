/**
 * Time is injected: the engine reads `now()` and sets timers only through a Clock, so tests
 * drive time with a ManualClock instead of sleeping until a job is due.
 */
export interface Clock {
  /** Current time, epoch ms. */
  now(): number;
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
  at: number;
  fn: () => void;
}

/**
 * A clock that only moves when told. `advance(ms)` fires every timer due in that span in
 * time order, letting pending promises settle between timers, so engine passes that a
 * timer starts can complete before the next one fires.
 */
export class ManualClock implements Clock {
  private current: number;
  private timers: ManualTimer[] = [];
  private nextId = 1;

  constructor(start: number = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const timer = { id: this.nextId++, at: this.current + Math.max(0, delayMs), fn };
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

  async advanceTo(target: number): Promise<void> {
    for (;;) {
      await settle();
      const due = this.timers
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = Math.max(this.current, target);
    await settle();
  }

  /** Sets the time without firing timers (a jump, as after downtime). */
  set(time: number): void {
    this.current = time;
  }
}

/** Lets queued promise callbacks and I/O callbacks run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}
