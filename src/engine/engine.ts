import type { Clock } from "../core/clock.js";
import { OutcomesNotRecordedError } from "../core/errors.js";
import { LoopGroup } from "../core/loop.js";
import {
  settlementRetryAt,
  type NodeServices,
  type Settlement,
  type Store,
} from "../store/store.js";
import { ClockJumpDetector, type ClockJump } from "./clock-jumps.js";
import { ClockSkewCheck } from "./clock-skew.js";
import { Dispatcher, type DispatchOutcome, type Handler } from "./dispatcher.js";
import type { Job } from "../core/job.js";
import type { Operation } from "../core/operation.js";
import type { FairShare } from "./fair-queue.js";
import { HeldTenants } from "./held-tenants.js";
import { LeaseKeeper } from "./lease-keeper.js";
import { LeaseSweeper } from "./lease-sweeper.js";
import { OperationRunner } from "./operation-runner.js";
import type { Logger } from "./logger.js";
import type { ResolvedOptions } from "./options.js";
import { PauseKeeper } from "./pause-keeper.js";
import { Retention } from "./retention.js";
import { Settler } from "./settler.js";
import { Watcher } from "./watcher.js";
import { WheelDriver } from "./wheel-driver.js";

/** How long stop() waits, after aborting the handlers still running, for them to return. */
const ABORT_GRACE_MS = 200;
/**
 * The least stop() gives the last outcomes to be recorded, even when handlers used up its
 * timeout: a healthy store writes them in milliseconds; this bounds only an unavailable one.
 */
const FLUSH_FLOOR_MS = 1000;

export interface EngineDeps {
  readonly options: ResolvedOptions;
  readonly handlers: ReadonlyMap<string, Handler>;
  /** Handler for targets with no named handler, if any. */
  readonly fallbackHandler: () => Handler | undefined;
  /** How the fallback handler's jobs share slots within a tenant, if it says. */
  readonly fallbackFairShare: () => FairShare | undefined;
  /** Every outcome, once settled (or found lost). */
  readonly onOutcome: (o: DispatchOutcome) => void;
  /** Every wall-clock jump noticed while started (already logged). */
  readonly onClockJump: (jump: ClockJump) => void;
  /** Each bulk operation's record after one of its batches ran here. */
  readonly onOperationProgress?: (op: Operation) => void;
}

/**
 * The firing side of a Scheduler, wired together: watcher -> timing wheel -> dispatcher ->
 * settler, plus the lease sweeper, retention, the store's change notifications and its node
 * services (PostgreSQL shard leases and partition maintenance). `start()` and `stop()` are
 * the Scheduler's; the rest of the public API only needs `wakeFor` and `inFlight`.
 */
export class Engine {
  private readonly options: ResolvedOptions;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly settler: Settler;
  private readonly dispatcher: Dispatcher;
  private readonly wheel: WheelDriver;
  private readonly watcher: Watcher;
  private readonly sweeper: LeaseSweeper;
  private readonly keeper: LeaseKeeper;
  private readonly retention: Retention;
  /** Runs bulk operations' batches (operation-runner.ts); the Scheduler wakes it. */
  readonly operations: OperationRunner;
  /** Pause work in bounded batches, when the store has pauses. */
  private readonly pauseKeeper: PauseKeeper | null;
  /** Held jobs per tenant, for the claims' fair share. */
  private readonly heldTenants = new HeldTenants();
  /**
   * Every loop of this node that reads or writes the store, the store's own included (node
   * services, LISTEN reconnects): after an outage the first to get through wakes the rest.
   */
  private readonly loops = new LoopGroup();
  readonly clockJumps: ClockJumpDetector;
  /** Null for a store without a clock of its own (SQLite: the same machine's). */
  readonly clockSkew: ClockSkewCheck | null;
  private unsubscribe: (() => void) | null = null;
  /** Stops listening for pauses made elsewhere (PauseStore.onPausesChanged). */
  private unsubscribePauses: (() => void) | null = null;
  private node: NodeServices | null = null;
  private nodeStarting: Promise<void> | null = null;
  private started = false;
  /** The first lease-keeper pass, which the watcher waits for (see start()). */
  private keeperFirstPass: Promise<void> | null = null;

  constructor(deps: EngineDeps) {
    const o = deps.options;
    this.options = o;
    this.store = o.store;
    this.clock = o.clock;
    this.logger = o.logger;
    this.settler = new Settler({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      onDone: (done) => {
        this.heldTenants.settled(done);
        const due = earliestWritten(done, this.clock.now());
        if (due !== null) this.watcher.wakeFor(due);
      },
      loops: this.loops,
      quietFor: (ms) => this.wheel.quietFor(ms),
    });
    this.dispatcher = new Dispatcher({
      clock: this.clock,
      logger: this.logger,
      settler: this.settler,
      handlers: deps.handlers,
      fallbackHandler: deps.fallbackHandler,
      fallbackFairShare: deps.fallbackFairShare,
      concurrency: o.concurrency,
      tenantConcurrency: o.tenantConcurrency,
      handlerTimeoutMs: o.handlerTimeoutMs,
      // The keeper renews every held claim, so a waiting job's lease ends at the last
      // renewal's expiry (or its claim's, if later). A job is given back instead of started
      // only once renewals have stopped (the database unreachable) and its lease is within
      // one renewal interval (or a handler timeout, if shorter) of its end.
      startDeadline: (job) =>
        Math.max(job.leaseExpiresAt ?? Infinity, this.keeper.renewedUntil) -
        Math.min(o.handlerTimeoutMs, o.leaseRenewIntervalMs),
      backoff: { baseMs: o.backoffBaseMs, maxMs: o.backoffMaxMs },
      onOutcome: deps.onOutcome,
      onCapacity: () => this.watcher.capacityFreed(),
      // pending and due again: claim them back (with a fresh lease) as soon as there is room
      onReleased: (jobs) => this.wakeFor(Math.min(...jobs.map((j) => j.dueAt))),
    });
    this.wheel = new WheelDriver(this.clock, (jobs) => {
      for (const j of jobs) this.dispatcher.submit(j);
    });
    this.keeper = new LeaseKeeper({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      nodeName: o.nodeName,
      owner: o.leaseOwner,
      leaseMs: o.leaseMs,
      renewIntervalMs: o.leaseRenewIntervalMs,
      held: () => this.inFlight,
      onReleased: () => this.watcher.wake(),
      loops: this.loops,
      quietFor: (ms) => this.wheel.quietFor(ms),
    });
    this.watcher = new Watcher({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      options: o,
      held: () => this.inFlight,
      heldByTenant: this.heldTenants.counts,
      // A claim still running when stop() began hands its jobs straight back.
      onClaimed: (jobs) => {
        this.heldTenants.claimed(jobs);
        // One claim statement leases its jobs alike: the first's lease is all of theirs.
        const leasedUntil = jobs[0]?.leaseExpiresAt;
        if (leasedUntil !== null && leasedUntil !== undefined) this.sweeper.leaseTaken(leasedUntil);
        if (this.started) this.wheel.add(jobs);
        else void this.release(jobs);
      },
      shards: () => this.claimableShards(),
      loops: this.loops,
      quietFor: (ms) => this.wheel.quietFor(ms),
    });
    this.sweeper = new LeaseSweeper({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      maxIdleMs: o.leaseSweepIntervalMs,
      onRequeued: () => this.watcher.wakeFor(this.clock.now()),
      loops: this.loops,
    });
    this.retention = new Retention({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      retentionMs: o.retentionMs,
      changeRetentionMs: o.changeRetentionMs,
      intervalMs: o.retentionIntervalMs,
      loops: this.loops,
    });
    this.operations = new OperationRunner({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      batchSize: o.operationBatchSize,
      idleMs: o.operationIdleMs,
      loops: this.loops,
      ...(deps.onOperationProgress === undefined ? {} : { onProgress: deps.onOperationProgress }),
      onMoved: (dueAt) => this.wakeFor(dueAt),
      quietFor: (ms) => this.wheel.quietForUnlessDense(ms),
    });
    this.pauseKeeper = this.store.pauses
      ? new PauseKeeper({
          pauses: this.store.pauses,
          clock: this.clock,
          logger: this.logger,
          intervalMs: o.pauseWorkIntervalMs,
          onReleased: () => this.watcher.wake(),
          waiting: () => this.wheel.size,
          handBack: (covered) => this.handBack(covered),
          loops: this.loops,
        })
      : null;
    this.clockJumps = new ClockJumpDetector({
      clock: this.clock,
      logger: this.logger,
      thresholdMs: o.clockJumpThresholdMs,
      intervalMs: o.clockCheckIntervalMs,
      onJump: (jump) => {
        // Timers run on the monotonic clock: what they were armed for is stale now.
        this.wheel.clockJumped(jump.jumpMs);
        this.watcher.wake();
        deps.onClockJump(jump);
      },
    });
    const store = this.store;
    this.clockSkew = store.clockRead
      ? new ClockSkewCheck({
          clock: this.clock,
          logger: this.logger,
          storeNow: () => store.clockRead!(),
          warnMs: o.clockSkewWarnMs,
          intervalMs: o.clockSkewCheckIntervalMs,
          loops: this.loops,
        })
      : null;
  }

  /** Jobs claimed by this process and not yet settled (wheel, queue, running, settling). */
  get inFlight(): number {
    return this.wheel.size + this.dispatcher.load;
  }

  /** A job due at `dueAt` was written here: make sure the watcher wakes in time (if running). */
  wakeFor(dueAt: number): void {
    if (this.started) this.watcher.wakeFor(dueAt);
  }

  /**
   * Starts firing: the watcher, the lease sweeper, retention, and whatever the store runs
   * for a firing node (PostgreSQL: shard leases and partition maintenance).
   */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.settler.open();
    this.dispatcher.resumeStarting();
    // With an explicit `shards` option the caller runs the node services itself.
    if (this.store.nodeStart && !this.options.shards) {
      this.nodeStarting = this.store
        .nodeStart({
          nodeId: this.options.nodeName,
          clock: this.clock,
          logger: this.logger,
          onShardsChange: () => this.watcher.wake(),
          loops: this.loops,
          // A dead node's leases were ended: its claims are this node's to sweep now.
          onPeerLost: () => this.sweeper.wake(),
        })
        .then(
          (node) => {
            this.node = node;
            this.watcher.wake();
          },
          (err: unknown) => this.logger.error({ err }, "starting node services failed"),
        );
    }
    this.unsubscribe =
      this.store.onEarlierDue?.((dueAt) => this.watcher.wakeFor(dueAt), {
        clock: this.clock,
        logger: this.logger,
        loops: this.loops,
      }) ?? null;
    // The claims a dead predecessor of this node left are the oldest due work: give them
    // back before the watcher's first claim, so they fire first and not behind a batch of
    // younger jobs. A failed pass only delays that; the keeper's loop retries it.
    this.keeper.reset();
    this.keeperFirstPass = this.keeper
      .runOnce()
      .then(
        () => undefined,
        (err: unknown) => this.logger.error({ err }, "first lease-keeper pass failed"),
      )
      .then(() => {
        if (this.started) {
          this.watcher.start();
          this.keeper.start();
        }
      });
    // A pause made through another node: hand back the claims it covers at once.
    this.unsubscribePauses =
      this.store.pauses?.onPausesChanged?.(() => void this.pauseKeeper?.runNow().catch(() => {}), {
        clock: this.clock,
        logger: this.logger,
        loops: this.loops,
      }) ?? null;
    this.sweeper.start();
    this.retention.start();
    this.operations.start();
    this.pauseKeeper?.start();
    this.clockJumps.start();
    this.clockSkew?.start();
  }

  /**
   * Starts nothing new from the moment it is called: the timing wheel and the dispatcher's
   * queue are emptied before anything is awaited, and their claims handed back (pending
   * again, attempt not counted), as are the jobs of a claim that was still in flight. Then
   * stops the loops and the node services, waits up to `timeoutMs` for running handlers
   * (their leases renewed meanwhile) and records their outcomes. Handlers still running
   * after the timeout are aborted; their jobs come back when their leases run out, or at
   * once when this node name starts again.
   *
   * Every step runs whatever an earlier one did: a failing one (the store unavailable, the
   * shard leases not handed back) is remembered and reported when all are done, as itself
   * or, if several failed, as an AggregateError. Recording outcomes is bounded by the same
   * timeout (at least FLUSH_FLOOR_MS more): what the store still refuses then is given
   * back to its leases and reported as an OutcomesNotRecordedError with the count.
   */
  async stop(opts: { timeoutMs?: number } = {}): Promise<void> {
    if (!this.started) return;
    this.started = false;
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    const errors: Error[] = [];
    const step = async (what: string, fn: () => Promise<unknown> | undefined): Promise<void> => {
      try {
        await fn();
      } catch (err) {
        errors.push(new Error(what, { cause: err }));
      }
    };
    this.dispatcher.stopStarting();
    const released = this.release([...this.wheel.drain(), ...this.dispatcher.takeQueued()]);
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.unsubscribePauses?.();
    this.unsubscribePauses = null;
    await this.keeperFirstPass;
    await step("stopping the loops", () =>
      Promise.all([
        this.watcher.stop(),
        this.sweeper.stop(),
        this.retention.stop(),
        this.operations.stop(),
        this.pauseKeeper?.stop(),
        this.clockJumps.stop(),
        this.clockSkew?.stop(),
      ]),
    );
    // Unstarted claims go back before the shards do, so a node taking a shard over finds
    // them pending; a store refusing the writes delays that only until the deadline.
    await settledWithin(released, deadline - Date.now());
    await step("stopping the node services", async () => {
      await this.nodeStarting;
      await this.node?.stop();
    });
    this.node = null;
    this.nodeStarting = null;
    await this.drainHandlers(timeoutMs);
    await step("stopping the lease keeper", () => this.keeper.stop());
    const unrecorded = await this.settler.flush(Math.max(FLUSH_FLOOR_MS, deadline - Date.now()));
    if (unrecorded > 0) {
      const err = new OutcomesNotRecordedError(unrecorded, { cause: this.settler.lastError });
      this.logger.error({ err, unrecorded }, err.message);
      errors.push(err);
    }
    // Handlers given up on never settle: nothing this start claimed is held any more.
    this.heldTenants.clear();
    // Anything settled from now on (a release racing the stop) is refused, not retried
    // against a store that is about to close; start() opens it again.
    this.settler.close();
    if (errors.length === 1) throw errors[0]!;
    if (errors.length > 1) {
      throw new AggregateError(errors, `stopping the scheduler: ${errors.length} steps failed`);
    }
  }

  /**
   * Waits up to `timeoutMs` for running handlers; then aborts them, gives those that honour
   * the abort ABORT_GRACE_MS to record their outcome and gives up on the rest, so nothing
   * settles after stop() returns (and the store closes).
   */
  private async drainHandlers(timeoutMs: number): Promise<void> {
    if (await settledWithin(this.dispatcher.idle(), timeoutMs)) return;
    this.logger.warn({ timeoutMs }, "handlers still running at stop; aborting them");
    this.dispatcher.abortRunning();
    await settledWithin(this.dispatcher.idle(), ABORT_GRACE_MS);
    this.dispatcher.abandonRunning();
  }

  /** Hands unstarted claims back: pending again at their due time, attempt not counted. */
  private async release(jobs: readonly Job[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = this.clock.now();
    await Promise.all(
      jobs.map((j) =>
        this.settler.settle({ id: j.id, fence: j.fence, firedAt: now, outcome: "release" }),
      ),
    );
  }

  /** Renews held leases and gives back an earlier incarnation's abandoned claims, now. */
  keepLeases(): ReturnType<LeaseKeeper["runOnce"]> {
    return this.keeper.runOnce();
  }

  /** Runs one watcher pass now (tests and tools); returns what it did. */
  runOnce(): ReturnType<Watcher["runOnce"]> {
    return this.watcher.runOnce();
  }

  /** Sweeps expired leases now. */
  sweepLeases(): ReturnType<LeaseSweeper["runOnce"]> {
    return this.sweeper.runOnce();
  }

  /** Runs retention now; resolves to the number of jobs removed. */
  purgeHistory(): Promise<number> {
    return this.retention.runOnce();
  }

  /** Runs the change feed's retention now; resolves to the number of changes removed. */
  purgeChanges(): Promise<number> {
    return this.retention.purgeChanges();
  }

  /**
   * Runs the pause work now (PauseKeeper): in a pass of the started keeper, else one pass
   * here. Resolves when it has run; its failure is the keeper's to log and retry.
   */
  async pauseWork(): Promise<void> {
    if (!this.pauseKeeper) return;
    if (this.started) return this.pauseKeeper.runNow();
    // Not started: nobody retries this pass, and a caller need not wait for it; the next
    // pass (a start, or another pause call) picks the work up.
    await this.pauseKeeper
      .runOnce()
      .catch((err: unknown) => this.logger.warn({ err }, "pause work failed"));
  }

  /**
   * Hands back the claims waiting in the timing wheel that `covered` picks (a pause made
   * here covers them): pending again, the attempt not counted, and then held by the claim.
   */
  async handBack(covered: (job: Job) => boolean): Promise<void> {
    await this.release(this.wheel.take(covered));
  }

  /** Resolves when nothing claimed by this process is still waiting or running. */
  async idle(): Promise<void> {
    while (this.wheel.size + this.dispatcher.load > 0) {
      await this.dispatcher.idle();
      await new Promise((r) => setImmediate(r));
    }
    await this.settler.flush();
  }

  /**
   * Shards the watcher may claim: the `shards` option when given, else the store's node
   * services (none until they have started), else all.
   */
  private claimableShards(): readonly number[] | undefined {
    if (this.options.shards) return this.options.shards();
    if (this.store.nodeStart) return this.node ? this.node.shards() : [];
    return undefined;
  }
}

/** Whether `promise` settled within `ms` (real time, as stop()'s timeout is). */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), Math.max(0, ms));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The earliest due time these written settlements put a job at: a retry's or a deferral's
 * new due time, or now for a callback written with its outcome (core/callbacks.ts). The
 * watcher planned its sleep while those jobs were claimed, and no store notifies its own
 * node of them (PostgreSQL's NOTIFY is for the others), so it wakes for them here: a
 * 500 ms backoff would otherwise wait for the next poll.
 */
function earliestWritten(done: readonly Settlement[], now: number): number | null {
  let earliest = Infinity;
  for (const st of done) {
    const at = st.callback ? now : settlementRetryAt(st);
    if (at !== null && at < earliest) earliest = at;
  }
  return earliest === Infinity ? null : earliest;
}
