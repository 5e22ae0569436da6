import type { Clock } from "../core/clock.js";
import type { Job } from "../core/job.js";
import type { StageResult, Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";
import type { ResolvedOptions } from "./options.js";
import { WorkCost } from "./work-cost.js";

/** What one watcher pass did. */
export interface WatchPass {
  /** Rows staged into the hot index. */
  readonly staged: number;
  /** Jobs claimed (handed to the timing wheel). */
  readonly claimed: number;
  /** True when there is more to do right away (staging unfinished or a full claim batch). */
  readonly more: boolean;
}

export interface WatcherDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly options: ResolvedOptions;
  /** Jobs claimed and not yet settled (wheel + queue + running). */
  readonly held: () => number;
  /** The same, by tenant (kept up to date by the engine), for the claims' fair share. */
  readonly heldByTenant: ReadonlyMap<string, number>;
  readonly onClaimed: (jobs: Job[]) => void;
  /** Shards this node may claim now; undefined means all. */
  readonly shards: () => readonly number[] | undefined;
  /** The node's loops that recover together (see LoopGroup). Default: none. */
  readonly loops?: LoopGroup;
  /**
   * The timing wheel's WheelDriver.quietFor: a pass whose claim would hold the event loop
   * when the wheel next fires runs right after that fire instead. Default: never waits.
   */
  readonly quietFor?: (ms: number) => Promise<void> | null;
}

/**
 * Finds due work and claims it. Each pass stages buckets about to come due (or overdue:
 * catch-up, oldest bucket first, in bounded steps), then claims a bounded batch of jobs due
 * within the horizon, oldest first, no tenant past `tenantMaxHeld` held jobs (the store
 * shares the batch out per tenant once one nears it: ClaimParams.tenantShare). Between passes it sleeps until the earliest due time
 * (minus the horizon), the next bucket to stage, or `maxIdleMs`, whichever comes first;
 * a write that moves the earliest due time earlier wakes it through `wakeFor`.
 */
export class Watcher {
  private readonly loop: ServiceLoop;
  private blocked = false;
  /**
   * Tenants at their held cap when the last claim came back short: their due jobs wait in
   * the store, so room freed for one of them wakes a pass (as `blocked` does for maxHeld).
   */
  private capped: string[] = [];
  /** Staging failed this many times in a row; it is not tried again before stageRetryAt. */
  private stageFailures = 0;
  private stageRetryAt = 0;
  /** How long a claim holds the event loop (the SQLite store's all of it). */
  private readonly claimCost: WorkCost;

  constructor(private readonly d: WatcherDeps) {
    this.claimCost = new WorkCost(d.clock);
    this.loop = new ServiceLoop({
      name: "watcher",
      clock: d.clock,
      logger: d.logger,
      group: d.loops,
      pass: () => this.pass(),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** A job due at `dueAt` was written: make sure a pass runs in time to claim it. */
  wakeFor(dueAt: number): void {
    this.loop.wakeAt(dueAt - this.d.options.horizonMs);
  }

  /** Run a pass now (shard ownership changed, say). */
  wake(): void {
    this.loop.wake();
  }

  /**
   * Capacity was freed: if claiming had stopped for lack of room, resume once a full claim
   * batch fits. Resuming at the first free slot would claim a handful of jobs per settle
   * batch (one claim statement per 100 jobs at maxHeld) instead of full batches.
   */
  capacityFreed(): void {
    if (this.blocked) {
      if (this.room() < this.globalResumeRoom(this.capped.length > 0)) return;
      this.blocked = false;
      this.loop.wake();
    } else if (
      this.capped.length > 0 &&
      this.capped.some((t) => this.tenantRoom(t) >= this.tenantResumeRoom())
    ) {
      this.capped = [];
      this.loop.wake();
    }
  }

  /**
   * One pass. A staging write that fails (a full disk, say) does not stop the claim of what
   * is already staged: the error is logged, the pass claims below the earliest bucket still
   * unstaged, and staging alone backs off (from 100 ms, doubling, up to 10 s) while claims
   * keep their own pace.
   */
  async runOnce(): Promise<WatchPass> {
    const now = this.d.clock.now();
    const stage = now >= this.stageRetryAt ? await this.stage(now) : null;
    return this.claim(now, stage ?? (await this.stagedSoFar(now)));
  }

  /** Stages due buckets; null when the write failed (logged; retried after a backoff). */
  private async stage(now: number): Promise<StageResult | null> {
    const o = this.d.options;
    try {
      const r = await this.d.store.bucketsStage({
        until: now + o.stageAheadMs,
        maxRows: o.stageBatchSize,
      });
      this.stageFailures = 0;
      this.stageRetryAt = 0;
      return r;
    } catch (err) {
      this.stageFailures++;
      const backoff = Math.min(10_000, 100 * 2 ** (this.stageFailures - 1));
      this.stageRetryAt = now + backoff;
      this.d.logger.error(
        { err, retryInMs: backoff },
        "staging buckets failed; claiming what is already staged",
      );
      return null;
    }
  }

  /** After a failed staging write: where staging stands, from a read (nothing is written). */
  private async stagedSoFar(now: number): Promise<StageResult> {
    const shards = this.d.shards();
    const next = await this.d.store.jobsNextDue({
      now,
      ...(shards === undefined ? {} : { shards }),
    });
    // done: the rest waits for staging's own retry, not for an immediate pass
    return { rows: 0, buckets: 0, done: true, unstagedFrom: next.nextUnstagedBucket };
  }

  private async claim(now: number, stage: StageResult): Promise<WatchPass> {
    const o = this.d.options;
    const room = this.room();
    this.blocked = room < this.globalResumeRoom(this.cappedTenants().length > 0);
    const shards = this.d.shards();
    let claimed = 0;
    let limit = 0;
    if (!this.blocked && (shards === undefined || shards.length > 0)) {
      limit = Math.min(o.claimBatchSize, room);
      const jobs = await this.claimCost.timed(
        (claimed: Job[]) => claimed.length,
        () =>
          this.d.store.jobsClaimDue({
            now,
            // never past a half-staged bucket: its unstaged rows may be due earlier
            dueBefore: Math.min(now + o.horizonMs, (stage.unstagedFrom ?? Infinity) - 1),
            limit,
            leaseMs: o.leaseMs,
            owner: o.leaseOwner,
            tenantShare: { max: o.tenantMaxHeld, held: this.heldForShare() },
            ...(shards === undefined ? {} : { shards }),
          }),
      );
      claimed = jobs.length;
      if (claimed > 0) this.d.onClaimed(jobs);
      this.capped = claimed < limit ? this.cappedTenants() : [];
    }
    return { staged: stage.rows, claimed, more: !stage.done || (limit > 0 && claimed === limit) };
  }

  private room(): number {
    return this.d.options.maxHeld - this.d.held();
  }

  private tenantRoom(tenant: string): number {
    return this.d.options.tenantMaxHeld - (this.d.heldByTenant.get(tenant) ?? 0);
  }

  /**
   * Held counts as the claim sees them: a tenant with less room than a batch counts as full,
   * so a tenant at its cap resumes with full batches (as maxHeld does), not a claim per
   * freed slot.
   */
  private heldForShare(): ReadonlyMap<string, number> {
    const capped = this.cappedTenants();
    if (capped.length === 0) return this.d.heldByTenant;
    const view = new Map(this.d.heldByTenant);
    for (const t of capped) view.set(t, this.d.options.tenantMaxHeld);
    return view;
  }

  /** A tenant's room that resumes its claims: a batch (all of its cap when that is smaller). */
  private tenantResumeRoom(): number {
    return Math.min(this.resumeRoom(), this.d.options.tenantMaxHeld);
  }

  /** Tenants whose room under their cap is less than a claim batch. */
  private cappedTenants(): string[] {
    const out: string[] = [];
    for (const t of this.d.heldByTenant.keys())
      if (this.tenantRoom(t) < this.tenantResumeRoom()) out.push(t);
    return out;
  }

  /** Room needed to claim: a full batch (all of maxHeld when that is smaller). */
  /**
   * Room under maxHeld that resumes claiming. While some tenant is at its cap, a claim can
   * only take the others' jobs, so it resumes once the share kept for them has room (at
   * most a batch): with a held set smaller than a batch, waiting for a whole batch to fit
   * would keep their due jobs behind every one of the capped tenant's held jobs.
   */
  private globalResumeRoom(someCapped: boolean): number {
    const full = this.resumeRoom();
    if (!someCapped) return full;
    const reserve = this.d.options.maxHeld - this.d.options.tenantMaxHeld;
    return Math.max(1, Math.min(full, reserve));
  }

  private resumeRoom(): number {
    return Math.min(this.d.options.claimBatchSize, this.d.options.maxHeld);
  }

  /**
   * One pass, then how long to sleep. A claim that would still hold the event loop when the
   * wheel next fires waits for that fire to be over: the jobs of one instant all start
   * before the next claim's store work (a claim just before a whole second made every job
   * due on it late by the claim's length). Jobs are claimed a horizon ahead, so the wait
   * costs them nothing.
   */
  private async pass(): Promise<number> {
    const o = this.d.options;
    const batch = Math.max(0, Math.min(o.claimBatchSize, this.room()));
    await this.d.quietFor?.(this.claimCost.estimateMs(batch));
    const r = await this.runOnce();
    if (r.more && !this.blocked) return 0;
    if (this.blocked) return o.maxIdleMs;
    const now = this.d.clock.now();
    const shards = this.d.shards();
    const next = await this.d.store.jobsNextDue({
      now,
      ...(shards === undefined ? {} : { shards }),
    });
    let wakeAt = now + o.maxIdleMs;
    if (next.earliestDue !== null) wakeAt = Math.min(wakeAt, next.earliestDue - o.horizonMs);
    if (next.nextUnstagedBucket !== null) {
      const stageAt = Math.max(next.nextUnstagedBucket - o.stageAheadMs, this.stageRetryAt);
      wakeAt = Math.min(wakeAt, stageAt);
    }
    // While jobs flow, pass at most every half horizon: each pass then claims half a horizon
    // of work (jobs keep at least that much lead in the wheel) instead of a pass per job as
    // each one enters the horizon. With nothing claimed, something due that this pass could
    // not take (another node's shard, a race) must not make it spin either.
    const floor = r.claimed > 0 ? Math.floor(o.horizonMs / 2) : 25;
    return Math.max(floor, wakeAt - now);
  }
}
