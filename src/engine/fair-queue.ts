import type { Job } from "../core/job.js";

/**
 * How a target shares the dispatcher's slots among its jobs within one tenant: jobs with the
 * same key wait in one lane, lanes take turns, and at most `concurrency` jobs of a lane run
 * at once. Webhook delivery keys by the URL's origin, so one slow receiver holds at most its
 * own lane's slots.
 */
export interface FairShare {
  /** The job's lane within its tenant (a webhook: the target URL's origin). */
  readonly keyOf: (job: Job) => string;
  /** Most jobs of one tenant and key running at once (at least 1). */
  readonly concurrency: number;
}

/** The jobs of one tenant and key, in arrival order; `running` counts those started. */
export class Lane {
  running = 0;
  /** Listed in its tenant's turn order (possibly stale: checked when its turn comes). */
  inTurn = false;
  private jobs: (Job | undefined)[] = [];
  private head = 0;

  constructor(
    readonly key: string,
    readonly tenant: TenantLanes,
    readonly limit: number,
  ) {}

  get queued(): number {
    return this.jobs.length - this.head;
  }

  get ready(): boolean {
    return this.head < this.jobs.length && this.running < this.limit;
  }

  push(job: Job): void {
    this.jobs.push(job);
  }

  shift(): Job {
    const job = this.jobs[this.head]!;
    // a queue read from `head`: shift() is O(n) per job
    this.jobs[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.jobs.length) {
      this.jobs = this.jobs.slice(this.head);
      this.head = 0;
    }
    return job;
  }

  /** Removes and returns the queued jobs `drop` selects, keeping the others in order. */
  remove(drop: (job: Job) => boolean): Job[] {
    const out: Job[] = [];
    const kept: Job[] = [];
    for (let i = this.head; i < this.jobs.length; i++) {
      const job = this.jobs[i]!;
      (drop(job) ? out : kept).push(job);
    }
    if (out.length > 0) {
      this.jobs = kept;
      this.head = 0;
    }
    return out;
  }

  drain(): Job[] {
    const rest = this.jobs.slice(this.head) as Job[];
    this.jobs = [];
    this.head = 0;
    return rest;
  }
}

/** One tenant's lanes and how many of its jobs run. */
export class TenantLanes {
  running = 0;
  inTurn = false;
  readonly lanes = new Map<string, Lane>();
  readonly turns = new Turns<Lane>();

  constructor(readonly name: string) {}
}

/**
 * The dispatcher's waiting room: a round-robin over tenants with due work, then over the
 * lanes of the tenant whose turn it is, each with a cap on its running jobs (a tenant's
 * `tenantLimit`, a lane's own limit). A tenant or lane at its cap sits out its turns until
 * one of its jobs finishes, so a slow or failing target ties up only its own share while the
 * others keep starting. Every step is O(1) amortised: turn lists are checked lazily, an
 * entry that is no longer ready when its turn comes is dropped and listed again once it is.
 */
export class FairQueue {
  private readonly tenants = new Map<string, TenantLanes>();
  private readonly turns = new Turns<TenantLanes>();
  private count = 0;

  constructor(private readonly tenantLimit: number) {}

  /** Jobs waiting (not started). */
  get size(): number {
    return this.count;
  }

  push(job: Job, laneKey: string, laneLimit: number): void {
    let tenant = this.tenants.get(job.tenant);
    if (!tenant) {
      tenant = new TenantLanes(job.tenant);
      this.tenants.set(job.tenant, tenant);
    }
    let lane = tenant.lanes.get(laneKey);
    if (!lane) {
      lane = new Lane(laneKey, tenant, Math.max(1, laneLimit));
      tenant.lanes.set(laneKey, lane);
    }
    lane.push(job);
    this.count++;
    this.listLane(lane);
  }

  /** The next job to start, counted as running in its lane and tenant; undefined when none may. */
  take(): { job: Job; lane: Lane } | undefined {
    for (let tenant = this.turns.shift(); tenant; tenant = this.turns.shift()) {
      tenant.inTurn = false;
      if (tenant.running >= this.tenantLimit) continue; // listed again when one finishes
      const lane = nextReadyLane(tenant);
      if (!lane) continue;
      const job = lane.shift();
      this.count--;
      lane.running++;
      tenant.running++;
      this.listLane(lane);
      return { job, lane };
    }
    return undefined;
  }

  /** A job taken from `lane` finished (its slot is free). */
  done(lane: Lane): void {
    lane.running--;
    lane.tenant.running--;
    this.listLane(lane);
    this.forgetIfIdle(lane);
  }

  /** Removes and returns every waiting job that `drop` selects. */
  remove(drop: (job: Job) => boolean): Job[] {
    if (this.count === 0) return [];
    const out: Job[] = [];
    for (const tenant of this.tenants.values()) {
      for (const lane of tenant.lanes.values()) {
        const removed = lane.remove(drop);
        if (removed.length === 0) continue;
        out.push(...removed);
        this.forgetIfIdle(lane);
      }
    }
    this.count -= out.length;
    return out;
  }

  /** Removes and returns every waiting job (stopping). */
  drain(): Job[] {
    const out: Job[] = [];
    for (const tenant of this.tenants.values()) {
      for (const lane of tenant.lanes.values()) {
        out.push(...lane.drain());
        this.forgetIfIdle(lane);
      }
    }
    this.count = 0;
    return out;
  }

  /** Lists a lane (and its tenant) for a turn if it could start a job now. */
  private listLane(lane: Lane): void {
    const tenant = lane.tenant;
    if (lane.ready && !lane.inTurn) {
      lane.inTurn = true;
      tenant.turns.push(lane);
    }
    if (!tenant.inTurn && tenant.running < this.tenantLimit && tenant.turns.size > 0) {
      tenant.inTurn = true;
      this.turns.push(tenant);
    }
  }

  /** Drops a lane with nothing waiting or running, and its tenant once it has no lanes. */
  private forgetIfIdle(lane: Lane): void {
    if (lane.queued > 0 || lane.running > 0) return;
    const tenant = lane.tenant;
    if (tenant.lanes.get(lane.key) === lane) tenant.lanes.delete(lane.key);
    if (
      tenant.lanes.size === 0 &&
      tenant.running === 0 &&
      this.tenants.get(tenant.name) === tenant
    ) {
      this.tenants.delete(tenant.name);
    }
  }
}

/** The tenant's next lane that may start a job, dropping stale entries on the way. */
function nextReadyLane(tenant: TenantLanes): Lane | undefined {
  for (let lane = tenant.turns.shift(); lane; lane = tenant.turns.shift()) {
    lane.inTurn = false;
    if (lane.ready) return lane;
  }
  return undefined;
}

/** A FIFO of turns read from `head` (Array.shift is O(n)). */
class Turns<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
