import type { Clock, TimerHandle } from "../core/clock.js";
import type { Job } from "../core/job.js";
import { TimingWheel } from "./timing-wheel.js";

/**
 * Holds claimed jobs in the timing wheel and hands each to `onDue` at its millisecond: one
 * clock timer, always armed for the wheel's next slot expiry. Never early: the wheel only
 * yields jobs whose due time is at or before the clock's now.
 */
export class WheelDriver {
  private readonly wheel: TimingWheel<Job>;
  private timer: TimerHandle | null = null;
  private timerAt: number | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (jobs: Job[]) => void,
  ) {
    this.wheel = new TimingWheel<Job>(clock.now());
  }

  get size(): number {
    return this.wheel.size;
  }

  /** Adds claimed jobs; those already due go to `onDue` at once. */
  add(jobs: readonly Job[]): void {
    const now = this.clock.now();
    const due: Job[] = [];
    for (const job of jobs) {
      if (job.dueAt <= now || !this.wheel.add(job.dueAt, job)) due.push(job);
    }
    if (due.length > 0) this.onDue(due);
    this.arm();
  }

  /** Removes every held job (stopping), in due order. */
  drain(): Job[] {
    this.disarm();
    return this.wheel.drain().map((e) => e.item);
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
    const due = this.wheel.poll(this.clock.now());
    if (due.length > 0) this.onDue(due.map((e) => e.item));
    this.arm();
  }
}
