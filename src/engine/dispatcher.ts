import type { Clock, TimerHandle } from "../core/clock.js";
import { bucketOf } from "../core/buckets.js";
import type { Job, JsonValue } from "../core/job.js";
import type { Settlement } from "../store/store.js";
import { backoffDelay } from "./backoff.js";
import type { Logger } from "./logger.js";
import { PermanentJobError, RetryLaterError } from "./handler-errors.js";
import type { Settler } from "./settler.js";

/** What a handler receives besides the job. */
export interface HandlerContext {
  /** Aborted when the handler runs past `handlerTimeoutMs` or the scheduler stops hard. */
  readonly signal: AbortSignal;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** How late the job started, in ms: now minus due time (negative would mean early: never). */
  readonly latenessMs: number;
}

/**
 * Runs a job. What it resolves to is kept as the job's result (as JSON; undefined is null);
 * a throw or a rejection is a failed attempt.
 */
export type Handler = (job: Job, ctx: HandlerContext) => unknown;

/** What happened to a job, reported to the scheduler's events once recorded. */
export type DispatchOutcome =
  | { kind: "fired"; job: Job; latenessMs: number; result: JsonValue | null; applied: boolean }
  | {
      kind: "failed";
      job: Job;
      latenessMs: number;
      error: string;
      retryAt: number;
      applied: boolean;
    }
  | { kind: "dead"; job: Job; latenessMs: number; error: string; applied: boolean }
  | { kind: "expired"; job: Job; latenessMs: number; applied: boolean };

export interface DispatcherDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settler: Settler;
  readonly handlers: ReadonlyMap<string, Handler>;
  /** Handler for targets with no named handler (the service's webhook delivery), if any. */
  readonly fallbackHandler: () => Handler | undefined;
  readonly concurrency: number;
  readonly handlerTimeoutMs: number;
  readonly backoff: { baseMs: number; maxMs: number };
  readonly bucketWidthMs: number;
  readonly onOutcome: (o: DispatchOutcome) => void;
  /** Called when a job leaves the dispatcher (capacity freed). */
  readonly onCapacity: () => void;
}

/**
 * Fires due jobs with a concurrency limit: looks up the handler by the job's target,
 * applies the misfire policy, runs it with a timeout, and settles the outcome (success,
 * retry with backoff and jitter, dead, expired) through the settler.
 */
export class Dispatcher {
  /** Jobs waiting for a slot: a queue read from `head` (shift() is O(n) per job). */
  private queue: Job[] = [];
  private head = 0;
  private running = 0;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly stopController = new AbortController();
  /** Handlers running now, checked for timeouts by one sweep timer (not a timer per job). */
  private readonly inFlight = new Set<RunningHandler>();
  private sweepTimer: TimerHandle | null = null;

  constructor(private readonly d: DispatcherDeps) {}

  /** Jobs queued or running. */
  get load(): number {
    return this.queue.length - this.head + this.running;
  }

  submit(job: Job): void {
    this.queue.push(job);
    this.pump();
  }

  /** Takes back jobs not yet started (to release their claims when stopping). */
  takeQueued(): Job[] {
    const rest = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    return rest;
  }

  /** Resolves when nothing runs. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Aborts the signal of every running handler. */
  abortRunning(): void {
    this.stopController.abort(new Error("scheduler stopped"));
  }

  private pump(): void {
    while (this.running < this.d.concurrency && this.head < this.queue.length) {
      const job = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Job;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.running++;
      void this.run(job).finally(() => {
        this.running--;
        this.d.onCapacity();
        this.pump();
        if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
    }
  }

  private async run(job: Job): Promise<void> {
    const start = this.d.clock.now();
    const latenessMs = start - job.dueAt;
    const base = { id: job.id, fence: job.fence, firedAt: start };
    if (job.expireAfterMs !== null && latenessMs > job.expireAfterMs) {
      const applied = await this.d.settler.settle({
        ...base,
        outcome: "expired",
        error: `claimed ${latenessMs} ms after its due time, beyond expireAfterMs ${job.expireAfterMs}`,
      });
      this.d.onOutcome({ kind: "expired", job, latenessMs, applied });
      return;
    }
    const handler = this.d.handlers.get(job.target) ?? this.d.fallbackHandler();
    let result: JsonValue | null = null;
    let error: string | null = null;
    let permanent = handler === undefined;
    let retryAfterMs: number | null = null;
    if (!handler) {
      error = `no handler registered for target ${JSON.stringify(job.target)}`;
    } else {
      try {
        result = toJsonResult(await this.runHandler(handler, job, latenessMs));
      } catch (err) {
        error = err instanceof Error ? err.message || err.name : String(err);
        permanent = err instanceof PermanentJobError;
        if (err instanceof RetryLaterError) retryAfterMs = err.retryAfterMs;
      }
    }
    if (error === null) {
      const applied = await this.d.settler.settle({ ...base, outcome: "succeeded", result });
      this.d.onOutcome({ kind: "fired", job, latenessMs, result, applied });
      return;
    }
    const retryable = !permanent && job.attempts < job.maxAttempts;
    if (!retryable) {
      const applied = await this.d.settler.settle({ ...base, outcome: "dead", error });
      this.d.onOutcome({ kind: "dead", job, latenessMs, error, applied });
      return;
    }
    const retryAt =
      this.d.clock.now() + Math.max(retryAfterMs ?? 0, backoffDelay(job.attempts, this.d.backoff));
    const settlement: Settlement = {
      ...base,
      outcome: "retry",
      error,
      retryAt,
      bucket: bucketOf(retryAt, this.d.bucketWidthMs),
    };
    const applied = await this.d.settler.settle(settlement);
    this.d.onOutcome({ kind: "failed", job, latenessMs, error, retryAt, applied });
  }

  /**
   * Runs the handler; rejects when it throws or when the timeout sweep finds it past
   * `handlerTimeoutMs`. Its AbortSignal is made only if the handler reads `ctx.signal`.
   */
  private runHandler(handler: Handler, job: Job, latenessMs: number): Promise<unknown> {
    const entry: RunningHandler = {
      startedAt: this.d.clock.now(),
      timeout: null,
      signal: null,
      reject: null,
    };
    const stop = this.stopController.signal;
    const ctx: HandlerContext = {
      attempt: job.attempts,
      latenessMs,
      get signal(): AbortSignal {
        entry.timeout ??= new AbortController();
        entry.signal ??= AbortSignal.any([entry.timeout.signal, stop]);
        return entry.signal;
      },
    };
    this.inFlight.add(entry);
    this.armSweep();
    return new Promise<unknown>((resolve, reject) => {
      entry.reject = reject;
      Promise.resolve()
        .then(() => handler(job, ctx))
        .then(resolve, reject);
    }).finally(() => {
      this.inFlight.delete(entry);
    });
  }

  private armSweep(): void {
    if (this.sweepTimer || this.inFlight.size === 0) return;
    const every = Math.min(1000, this.d.handlerTimeoutMs);
    this.sweepTimer = this.d.clock.setTimer(() => {
      this.sweepTimer = null;
      const now = this.d.clock.now();
      for (const entry of this.inFlight) {
        if (now - entry.startedAt < this.d.handlerTimeoutMs) continue;
        const err = new Error(`handler timed out after ${this.d.handlerTimeoutMs} ms`);
        this.inFlight.delete(entry);
        entry.timeout?.abort(err);
        entry.reject?.(err);
      }
      this.armSweep();
    }, every);
  }
}

interface RunningHandler {
  readonly startedAt: number;
  timeout: AbortController | null;
  signal: AbortSignal | null;
  reject: ((err: Error) => void) | null;
}

/** A handler's return value as JSON (null when it returned nothing or something not JSON). */
function toJsonResult(value: unknown): JsonValue | null {
  if (value === undefined) return null;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : (JSON.parse(text) as JsonValue);
  } catch {
    return null;
  }
}
