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
    return this.wheel.drain().map((e) => e.item);
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
    if (due.length > 0) this.onDue(due.map((e) => e.item));
    this.arm();
  }
}
