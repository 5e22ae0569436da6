import type { Clock, TimerHandle } from "../core/clock.js";
import type { Job, JsonValue } from "../core/job.js";
import type { Settlement } from "../store/store.js";
import { createIdGenerator } from "../core/ids.js";
import { backoffDelay } from "./backoff.js";
import { withCallback } from "./callbacks.js";
import { FairQueue, type FairShare, type Lane } from "./fair-queue.js";
import type { Logger } from "./logger.js";
import { InfrastructureError, PermanentJobError, RetryLaterError } from "./handler-errors.js";
import type { Settler } from "./settler.js";
import { endAttemptSpan, startAttemptSpan, type AttemptTrace } from "./tracing.js";

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
  | { kind: "succeeded"; job: Job; latenessMs: number; result: JsonValue | null; applied: boolean }
  | {
      kind: "failed";
      job: Job;
      latenessMs: number;
      error: string;
      retryAt: number;
      applied: boolean;
    }
  | { kind: "dead"; job: Job; latenessMs: number; error: string; applied: boolean }
  /** The handler met an InfrastructureError: pending again at `retryAt`, no attempt spent. */
  | {
      kind: "deferred";
      job: Job;
      latenessMs: number;
      error: string;
      retryAt: number;
      applied: boolean;
    }
  | { kind: "expired"; job: Job; latenessMs: number; applied: boolean };

export interface DispatcherDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settler: Settler;
  readonly handlers: ReadonlyMap<string, Handler>;
  /** Handler for targets with no named handler (the service's webhook delivery), if any. */
  readonly fallbackHandler: () => Handler | undefined;
  /** How the fallback handler's jobs share slots within a tenant (webhooks: per origin). */
  readonly fallbackFairShare: () => FairShare | undefined;
  readonly concurrency: number;
  /** Most handlers of one tenant running at once. */
  readonly tenantConcurrency: number;
  readonly handlerTimeoutMs: number;
  readonly backoff: { baseMs: number; maxMs: number };
  readonly onOutcome: (o: DispatchOutcome) => void;
  /** Called when a job leaves the dispatcher (capacity freed). */
  readonly onCapacity: () => void;
  /**
   * The latest moment (epoch ms) a waiting job may start so that its claim is still ours
   * until its handler is done; a job still waiting then is given back. Infinity: no limit.
   */
  readonly startDeadline: (job: Job) => number;
  /** Unstarted jobs given back before their lease ran out, once recorded as pending again. */
  readonly onReleased: (jobs: readonly Job[]) => void;
}

/**
 * Fires due jobs with a concurrency limit: looks up the handler by the job's target,
 * applies the misfire policy, runs it with a timeout, and settles the outcome (success,
 * retry with backoff and jitter, dead, expired) through the settler.
 *
 * Slots are shared fairly (FairQueue): tenants with waiting jobs take turns, each running at
 * most `tenantConcurrency`, and within a tenant the lanes of its targets take turns (a named
 * handler is one lane; webhooks have a lane per origin with its own cap). A job that waits
 * so long that its lease could run out before its handler's timeout is given back unstarted
 * (pending again, its attempt not counted) rather than started on a claim that may already
 * be lost, or left for the lease sweeper to count as a failed attempt.
 *
 * The limit counts running handlers only: a slot is freed as soon as the handler returns or
 * throws, while its settlement waits for the settler's next batch. Holding the slot until
 * the write would cap every settle batch at `concurrency` rows and leave the slots idle
 * while the batch is written. A job still counts in `load` (and so against `maxHeld`, and
 * for `idle()` and stopping) until its settlement is recorded and its outcome reported.
 *
 * This is the per-job path at tens of thousands of jobs a second, so it is written with
 * callbacks rather than async functions: their awaits (three promise hops per job, and the
 * garbage) were a fifth of the engine's own time in profiles.
 */
export class Dispatcher {
  /** Jobs waiting for a slot. */
  private readonly queue: FairQueue;
  /** Handlers running (slots taken). */
  private running = 0;
  /** Attempts finished whose settlement is not yet recorded and reported. */
  private settling = 0;
  private pumping = false;
  /** False once stopping: queued jobs stay queued (to be handed back), nothing new starts. */
  private starting = true;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly stopController = new AbortController();
  /** Handlers running now, checked for timeouts by one sweep timer (not a timer per job). */
  private readonly inFlight = new Set<RunningHandler>();
  private sweepTimer: TimerHandle | null = null;
  /** Ids of the callback jobs settlements carry (engine/callbacks.ts). */
  private readonly newCallbackId = createIdGenerator(() => this.d.clock.now());

  constructor(private readonly d: DispatcherDeps) {
    this.queue = new FairQueue(d.tenantConcurrency);
  }

  /** Jobs queued, running, or waiting for their settlement to be recorded. */
  get load(): number {
    return this.queue.size + this.running + this.settling;
  }

  submit(job: Job): void {
    // Named handlers are one lane each; the fallback's jobs are laned by its FairShare. The
    // prefixes keep a handler name from ever sharing a lane with a fallback key.
    const share = this.d.handlers.has(job.target) ? undefined : this.d.fallbackFairShare();
    if (share) this.queue.push(job, `other ${share.keyOf(job)}`, share.concurrency);
    else this.queue.push(job, `handler ${job.target}`, Infinity);
    this.pump();
    this.armSweep();
  }

  /**
   * Stops starting jobs (stopping): from now on a freed slot starts nothing, and
   * `takeQueued()` hands back what waits. `resumeStarting()` undoes it.
   */
  stopStarting(): void {
    this.starting = false;
  }

  resumeStarting(): void {
    this.starting = true;
    this.pump();
  }

  /** Takes back jobs not yet started (to release their claims when stopping). */
  takeQueued(): Job[] {
    return this.queue.drain();
  }

  /** Resolves when nothing runs and every finished attempt is recorded and reported. */
  idle(): Promise<void> {
    if (this.running === 0 && this.settling === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Aborts the signal of every running handler. */
  abortRunning(): void {
    this.stopController.abort(new Error("scheduler stopped"));
  }

  /**
   * Gives up on every handler still running (stopping, after the abort): its outcome, if it
   * ever comes, is ignored, and nothing is written for it; its claim is left to run out (or
   * to a restart of this node name). Without this a handler that ignores its signal, or
   * answers it late, settled after the stop returned: against a closed store, which the
   * settler retried forever and the process never exited. Returns how many it gave up on.
   */
  abandonRunning(): number {
    const runs = [...this.inFlight];
    for (const run of runs) {
      run.done = true;
      this.inFlight.delete(run);
      this.running--;
      this.queue.done(run.lane);
    }
    if (runs.length > 0) {
      this.d.logger.warn(
        { jobs: runs.length, ids: runs.slice(0, 20).map((r) => r.job.id) },
        "handlers still running after the abort; their claims are left to their leases",
      );
      if (this.running === 0 && this.settling === 0) {
        for (const w of this.idleWaiters.splice(0)) w();
      }
    }
    return runs.length;
  }

  private pump(): void {
    // A job that finishes at once (expired, no handler) frees its slot inside this loop;
    // the loop picks that up instead of recursing once per job.
    if (this.pumping || !this.starting) return;
    this.pumping = true;
    try {
      while (this.running < this.d.concurrency) {
        const next = this.queue.take();
        if (!next) break;
        this.running++;
        this.start(next.job, next.lane);
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Applies the misfire policy and starts the handler (the slot is taken). */
  private start(job: Job, lane: Lane): void {
    const now = this.d.clock.now();
    if (now > this.startDeadline(job)) {
      this.running--;
      this.queue.done(lane);
      this.release([job]);
      return;
    }
    const latenessMs = now - job.dueAt;
    if (job.expireAfterMs !== null && latenessMs > job.expireAfterMs) {
      this.finish(
        lane,
        {
          id: job.id,
          fence: job.fence,
          firedAt: now,
          outcome: "expired",
          error: `claimed ${latenessMs} ms after its due time, beyond expireAfterMs ${job.expireAfterMs}`,
        },
        { kind: "expired", job, latenessMs, applied: false },
      );
      return;
    }
    const handler = this.d.handlers.get(job.target) ?? this.d.fallbackHandler();
    const run: RunningHandler = {
      job,
      lane,
      startedAt: now,
      latenessMs,
      timeout: null,
      signal: null,
      done: false,
      trace: null,
    };
    if (!handler) {
      this.handlerDone(
        run,
        new PermanentJobError(`no handler registered for target ${JSON.stringify(job.target)}`),
        undefined,
      );
      return;
    }
    const ctx = new Context(run, this.stopController.signal);
    this.inFlight.add(run);
    this.armSweep();
    const traced = (run.trace = startAttemptSpan(job, latenessMs));
    // Called from a microtask, never inside submit(): a handler's synchronous throw is a
    // failed attempt like a rejection, and a handler never runs inside the engine's loops.
    Promise.resolve()
      .then(() => (traced ? traced.run(() => handler(job, ctx)) : handler(job, ctx)))
      .then(
        (value) => this.handlerDone(run, null, value),
        (err: unknown) => this.handlerDone(run, err ?? new Error(String(err)), undefined),
      );
  }

  /**
   * The handler returned (`err` null) or threw; or the timeout sweep gave up on it. Only the
   * first call counts: a handler finishing after its timeout is ignored.
   */
  private handlerDone(run: RunningHandler, err: unknown, value: unknown): void {
    if (run.done) return;
    run.done = true;
    this.inFlight.delete(run);
    const { job, latenessMs, lane } = run;
    if (err === null) {
      endAttemptSpan(run.trace, "succeeded", null);
      const result = toJsonResult(value);
      this.finish(
        lane,
        { id: job.id, fence: job.fence, firedAt: run.startedAt, outcome: "succeeded", result },
        { kind: "succeeded", job, latenessMs, result, applied: false },
      );
      return;
    }
    if (err instanceof InfrastructureError) {
      endAttemptSpan(run.trace, "released", err);
      this.handBack(run, err);
      return;
    }
    const base = { id: job.id, fence: job.fence, firedAt: run.startedAt };
    const error = err instanceof Error ? err.message || err.name : String(err);
    const retryable = !(err instanceof PermanentJobError) && job.attempts < job.maxAttempts;
    if (!retryable) {
      endAttemptSpan(run.trace, "dead", err);
      this.finish(
        lane,
        { ...base, outcome: "dead", error },
        { kind: "dead", job, latenessMs, error, applied: false },
      );
      return;
    }
    const retryAfterMs = err instanceof RetryLaterError ? err.retryAfterMs : 0;
    const retryAt =
      this.d.clock.now() + Math.max(retryAfterMs, backoffDelay(job.attempts, this.d.backoff));
    endAttemptSpan(run.trace, "retry", err, { retryAt });
    this.finish(
      lane,
      {
        ...base,
        outcome: "retry",
        error,
        retryAt,
      },
      { kind: "failed", job, latenessMs, error, retryAt, applied: false },
    );
  }

  /**
   * An infrastructure failure is not an attempt: the claim is released (the store gives the
   * attempt back) due again after a backoff, with the error's message as the job's last
   * error. Its cause, which may name hosts and addresses, goes to the log only.
   */
  private handBack(run: RunningHandler, err: InfrastructureError): void {
    const { job, latenessMs, lane } = run;
    const retryAt = this.d.clock.now() + (err.retryAfterMs ?? backoffDelay(1, this.d.backoff));
    const error = err.message || err.name;
    this.d.logger.warn(
      { err, id: job.id, tenant: job.tenant, retryAt },
      "infrastructure unavailable: job handed back without spending an attempt",
    );
    this.finish(
      lane,
      {
        id: job.id,
        fence: job.fence,
        firedAt: run.startedAt,
        outcome: "release",
        retryAt,
        error,
      },
      { kind: "deferred", job, latenessMs, error, retryAt, applied: false },
    );
  }

  /** Frees the slot, then records the settlement and reports the outcome once written. */
  private finish(lane: Lane, settlement: Settlement, outcome: DispatchOutcome): void {
    this.running--;
    this.queue.done(lane);
    this.settling++;
    this.pump();
    const written = withCallback(outcome.job, settlement, this.d.clock.now(), this.newCallbackId);
    void this.d.settler.settle(written).then((applied) => {
      try {
        outcome.applied = applied;
        this.d.onOutcome(outcome);
      } finally {
        this.settled(1);
      }
    });
  }

  private settled(n: number): void {
    this.settling -= n;
    this.d.onCapacity();
    if (this.running === 0 && this.settling === 0) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private startDeadline(job: Job): number {
    return this.d.startDeadline(job);
  }

  /** Gives unstarted claims back (pending again, the attempt not counted). */
  private release(jobs: Job[]): void {
    const now = this.d.clock.now();
    this.settling += jobs.length;
    this.d.logger.info(
      { jobs: jobs.length, queued: this.queue.size, running: this.running },
      "gave back claimed jobs that could not start before their lease ran out",
    );
    void Promise.all(
      jobs.map((j) =>
        this.d.settler.settle({ id: j.id, fence: j.fence, firedAt: now, outcome: "release" }),
      ),
    ).then(() => {
      try {
        this.d.onReleased(jobs);
      } finally {
        this.settled(jobs.length);
      }
    });
  }

  /**
   * One timer (not one per job) times out running handlers and gives back waiting jobs past
   * their start deadline. It runs at least every `handlerTimeoutMs`, and a deadline leaves a
   * whole handler timeout before the lease ends, so a give-back is recorded before the lease
   * sweeper could count the claim as a failed attempt.
   */
  private armSweep(): void {
    if (this.sweepTimer || (this.inFlight.size === 0 && this.queue.size === 0)) return;
    const every = Math.min(1000, this.d.handlerTimeoutMs);
    this.sweepTimer = this.d.clock.setTimer(() => {
      this.sweepTimer = null;
      const now = this.d.clock.now();
      for (const run of this.inFlight) {
        if (now - run.startedAt < this.d.handlerTimeoutMs) continue;
        const err = new Error(`handler timed out after ${this.d.handlerTimeoutMs} ms`);
        run.timeout?.abort(err);
        this.handlerDone(run, err, undefined);
      }
      // deadline - every: the job is back before its deadline passes, not up to `every` after
      const late = this.queue.remove((job) => now > this.startDeadline(job) - every);
      if (late.length > 0) this.release(late);
      this.armSweep();
    }, every);
  }
}

interface RunningHandler {
  readonly job: Job;
  readonly lane: Lane;
  readonly startedAt: number;
  readonly latenessMs: number;
  timeout: AbortController | null;
  signal: AbortSignal | null;
  /** Set once the outcome is taken (the handler finished or timed out). */
  done: boolean;
  /** The attempt's span (null without a handler, or with tracing off). */
  trace: AttemptTrace | null;
}

/**
 * A handler's context. A class rather than an object literal: a literal with a getter is
 * built through a slow runtime path, once per job. The AbortSignal is made only if the
 * handler reads `signal`.
 */
class Context implements HandlerContext {
  readonly attempt: number;
  readonly latenessMs: number;
  // #private: invisible to a handler that spreads or logs its context
  readonly #run: RunningHandler;
  readonly #stop: AbortSignal;

  constructor(run: RunningHandler, stop: AbortSignal) {
    this.attempt = run.job.attempts;
    this.latenessMs = run.latenessMs;
    this.#run = run;
    this.#stop = stop;
  }

  get signal(): AbortSignal {
    const run = this.#run;
    run.timeout ??= new AbortController();
    run.signal ??= AbortSignal.any([run.timeout.signal, this.#stop]);
    return run.signal;
  }
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
