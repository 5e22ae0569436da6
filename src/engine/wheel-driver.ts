import type { Clock, TimerHandle } from "../core/clock.js";
import type { Job } from "../core/job.js";
import { TimingWheel } from "./timing-wheel.js";

/**
 * Holds claimed jobs in the timing wheel and hands each to `onDue` at its millisecond: one
 * clock timer, always armed for the wheel's next slot expiry. Never early: the wheel only
 * yields jobs whose due time is at or before the clock's now.
 *
 * The wheel's time only moves forward, so a wall clock stepped back would leave it ahead of
 * now, and it would take jobs due between now and its time for due. Whenever now is behind
 * the wheel's time the wheel is rebuilt at now, keeping "never early by this process's wall
 * clock" through any jump (see clock-jumps.ts).
 */
export class WheelDriver {
  private wheel: TimingWheel<Job>;
  /** The time the wheel was last advanced to (its start, or the last poll). */
  private wheelTime: number;
  private timer: TimerHandle | null = null;
  private timerAt: number | null = null;
  /** Waiting for the next fire to be over (quietFor). */
  private afterFire: (() => void)[] = [];
  /** When the last fire handed jobs out, and how long after the one before it. */
  private lastFireAt: number | null = null;
  private fireGapMs: number | null = null;

  /**
   * quietFor, but null (no wait) while the wheel hands jobs out more often than every `ms`:
   * work that long then holds some fire up whether it waits for the next one or not, and
   * waiting only leaves the loop idle (a bulk operation's batches beside jobs due every 10 ms
   * spent about a quarter of their wall time waiting: docs/benchmarks.md). For work that may
   * come later (OperationRunner); claims and settlements keep quietFor.
   */
  quietForUnlessDense(ms: number): Promise<void> | null {
    if (this.fireGapMs !== null && this.fireGapMs < ms) return null;
    return this.quietFor(ms);
  }

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (jobs: Job[]) => void,
  ) {
    this.wheelTime = clock.now();
    this.wheel = new TimingWheel<Job>(this.wheelTime);
  }

  get size(): number {
    return this.wheel.size;
  }

  /** Adds claimed jobs; those already due go to `onDue` at once. */
  add(jobs: readonly Job[]): void {
    const now = this.clock.now();
    this.rewindIfBehind(now);
    const due: Job[] = [];
    for (const job of jobs) {
      if (job.dueAt <= now || !this.wheel.add(job.dueAt, job)) due.push(job);
    }
    if (due.length > 0) this.onDue(due);
    this.arm();
  }

  /**
   * Null when no held job is due within `ms` from now, so work holding the event loop about
   * that long may start at once. Otherwise a promise resolved right after the fire that
   * hands out due jobs, once they are with the dispatcher and their handlers have started
   * (a 0 ms timer: the turn after the fire's microtasks), or when the wheel is drained.
   * Store work waits on it so that it never holds the loop at a fire instant (work-cost.ts).
   *
   * It looks at the earliest held job, not at the wheel's next timer: a coarser level's
   * slot expires up to 256 ms before its jobs are due only to cascade them, and work that
   * waited for that fire and started right after it ran over the instant itself (a claim
   * of 500 series occurrences, 47 ms, made a burst of 1,000 jobs due on a whole second up
   * to 37 ms late in bench/series.ts).
   */
  quietFor(ms: number): Promise<void> | null {
    const next = this.wheel.earliestDue();
    if (next === null || next > this.clock.now() + ms) return null;
    return new Promise((resolve) => this.afterFire.push(resolve));
  }

  /** Removes the held jobs `pick` chooses (the rest keep waiting); returns them. */
  take(pick: (job: Job) => boolean): Job[] {
    if (this.wheel.size === 0) return [];
    const held = this.drain();
    const taken: Job[] = [];
    const kept: Job[] = [];
    for (const j of held) (pick(j) ? taken : kept).push(j);
    this.add(kept);
    return taken;
  }

  /** Removes every held job (stopping), in due order. */
  drain(): Job[] {
    this.disarm();
    const jobs = this.wheel.drain().map((e) => e.item);
    for (const w of this.fireOver()) w();
    return jobs;
  }

  /**
   * The wall clock jumped. Forward: jobs the jump crossed are due now by the wall clock, so
   * the wheel is polled at once instead of when its timer (monotonic) was armed for. Back:
   * the wheel is rebuilt at now (held jobs keep waiting for their due time) and re-armed.
   */
  clockJumped(jumpMs: number): void {
    if (jumpMs < 0) {
      this.rewindIfBehind(this.clock.now());
      this.disarm();
      this.arm();
      return;
    }
    if (this.wheel.size === 0) return;
    this.disarm();
    this.timerAt = this.clock.now();
    this.timer = this.clock.setTimer(() => this.fire(), 0);
  }

  private rewindIfBehind(now: number): void {
    if (now >= this.wheelTime) return;
    const held = this.wheel.drain();
    this.wheel = new TimingWheel<Job>(now);
    this.wheelTime = now;
    const due: Job[] = [];
    for (const e of held) if (!this.wheel.add(e.at, e.item)) due.push(e.item);
    this.disarm();
    if (due.length > 0) this.onDue(due);
    // nothing left to fire: no fire will come for what waits (quietFor)
    if (this.wheel.size === 0) for (const w of this.fireOver()) w();
  }

  private arm(): void {
    const next = this.wheel.nextExpiry();
    if (next === null) return this.disarm();
    if (this.timerAt !== null && this.timerAt <= next) return;
    this.disarm();
    this.timerAt = next;
    this.timer = this.clock.setTimer(() => this.fire(), next - this.clock.now());
  }

  private disarm(): void {
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.timerAt = null;
  }

  private fire(): void {
    this.timer = null;
    this.timerAt = null;
    const now = this.clock.now();
    this.rewindIfBehind(now);
    this.wheelTime = now;
    const due = this.wheel.poll(now);
    if (due.length > 0) {
      this.fireGapMs = this.lastFireAt === null ? null : now - this.lastFireAt;
      this.lastFireAt = now;
      this.onDue(due.map((e) => e.item));
    }
    this.arm();
    // a fire that only cascaded entries to finer slots is not the one the waiters avoid
    if (this.afterFire.length === 0 || (due.length === 0 && this.wheel.size > 0)) return;
    // those that ask from now on wait for the fire after this one
    const waiting = this.fireOver();
    this.clock.setTimer(() => {
      for (const w of waiting) w();
    }, 0);
  }

  /** Takes the work waiting for a fire to be over (quietFor). */
  private fireOver(): (() => void)[] {
    const waiting = this.afterFire;
    this.afterFire = [];
    return waiting;
  }
}
