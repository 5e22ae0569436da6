import type { Clock } from "../core/clock.js";
import { QuotaExceededError } from "../core/errors.js";
import {
  parsePauseInput,
  pauseMatches,
  PauseNotFoundError,
  PausesUnsupportedError,
  type Pause,
  type PauseInput,
  type PauseState,
} from "../core/pause.js";
import type { Job } from "../core/job.js";
import { optionalString, requireInteger } from "../core/validate.js";
import type { PauseStore } from "../store/pause-store.js";
import type { Store } from "../store/store.js";

/** When a refused pause may be asked again: as soon as one is resumed, so a guess, in ms. */
const PAUSE_RETRY_AFTER_MS = 60_000;

/** Jobs per transaction of runWork (the engine's pause keeper uses as many). */
const WORK_BATCH = 5000;

/** What the pause operations need of the scheduler. */
export interface PauseDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly newId: () => string;
  readonly defaultTenant: string;
  /** Most open (active or resuming) pauses per tenant (SchedulerOptions.maxOpenPauses). */
  readonly maxOpenPauses: number;
  /** Runs the pause work now (the engine's PauseKeeper). */
  readonly work: () => Promise<void>;
  /** Hands back this node's waiting claims that `covered` picks. */
  readonly handBack: (covered: (job: Job) => boolean) => Promise<void>;
}

/** What listPauses takes: whose, which states, and a page of them. */
export interface ListPausesOptions {
  readonly tenant?: string;
  /** Default: active and resuming. */
  readonly states?: readonly PauseState[];
  /** A pause id: list those made after it (the last id of the previous page). */
  readonly after?: string;
  /** At most this many, 1 to 10000. Default: all. */
  readonly limit?: number;
}

/**
 * The bounds of a page of pauses on every surface that pages them (HTTP API, dashboard, CLI,
 * the OpenAPI document): at most `max` a page, `default` when no limit is given.
 */
export const PAUSE_PAGE = { default: 100, max: 1000 } as const;

/** A page of pauses and the cursor of the next one (the last id of this page; null: last). */
export interface PausePage {
  readonly pauses: Pause[];
  readonly nextCursor: string | null;
}

/**
 * A page of at most `opts.limit` pauses read through `list` (a Scheduler's listPauses), for
 * the surfaces that page them (HTTP, CLI): one more is read, to know whether another follows.
 */
export async function listPausePage(
  list: (opts: ListPausesOptions) => Promise<Pause[]>,
  opts: ListPausesOptions & { readonly limit: number },
): Promise<PausePage> {
  const pauses = await list({ ...opts, limit: opts.limit + 1 });
  const page = pauses.slice(0, opts.limit);
  const more = pauses.length > opts.limit;
  return { pauses: page, nextCursor: more ? page[page.length - 1]!.id : null };
}

/** The options every pause call takes. */
export interface PauseCallOptions {
  /** The tenant the pause belongs to (default: the scheduler's default tenant). */
  readonly tenant?: string;
}

/**
 * Pause and resume by tenant, target or tag (issue 13 §4; src/core/pause.ts says what a pause
 * does): the Scheduler's `pause`, `resume`, `getPause` and `listPauses`. Validation is
 * parsePauseInput, shared with the HTTP API and the CLI.
 */
export class PauseOperations {
  constructor(private readonly d: PauseDeps) {}

  /**
   * Makes an active pause. When it resolves, no claim on any node takes a job it covers, and
   * the claims this node already holds for such jobs and has not started are handed back;
   * the jobs pending before it are moved out of the due-time index in the background.
   */
  async pause(input: PauseInput, opts: PauseCallOptions = {}): Promise<Pause> {
    const parsed = parsePauseInput(input);
    const tenant = opts.tenant ?? this.d.defaultTenant;
    const max = this.d.maxOpenPauses;
    const r = await this.pauses().pauseInsert({
      pause: { id: this.d.newId(), tenant, ...parsed },
      now: this.d.clock.now(),
      maxOpen: max,
    });
    // Every claim probes the open pauses: they are bounded like every other input. The store
    // counts them in the insert's transaction, so pauses made at once pass it one by one.
    if (r.outcome === "too-many") {
      throw new QuotaExceededError(
        tenant,
        "openPauses",
        `at most ${max} open (active or resuming) pauses (maxOpenPauses); resume one first`,
        `a pause beside ${r.open} open ones`,
        PAUSE_RETRY_AFTER_MS,
      );
    }
    const pause = r.pause;
    await this.d.handBack((job) => pauseMatches(pause, job));
    void this.d.work();
    return pause;
  }

  /**
   * Resumes a pause: its held jobs are given back by its `onResume` policy, in the
   * background (they are never claimed before). Resolves to the pause, `resuming` (or as it
   * was, when already resumed). Throws PauseNotFoundError for an unknown id.
   */
  async resume(id: string, opts: PauseCallOptions = {}): Promise<Pause> {
    const r = await this.pauses().pauseResume({
      id,
      ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
      now: this.d.clock.now(),
    });
    if (r.outcome === "not-found") throw new PauseNotFoundError(id);
    void this.d.work();
    return r.pause;
  }

  /** One pause, or null. With `tenant`, another tenant's pause is null too. */
  get(id: string, opts: PauseCallOptions = {}): Promise<Pause | null> {
    return this.pauses().pauseGet({
      id,
      ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
    });
  }

  /**
   * Pauses in creation order; by default those not yet resumed (active and resuming). With
   * `limit`, at most that many; with `after` (a pause id, the last of the previous page),
   * those made after it.
   */
  list(opts: ListPausesOptions = {}): Promise<Pause[]> {
    const after = optionalString(opts.after, "after", { max: 64 });
    const limit =
      opts.limit === undefined ? undefined : requireInteger(opts.limit, "limit", 1, 10_000);
    return this.pauses().pausesList({
      ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
      states: opts.states ?? ["active", "resuming"],
      ...(after === undefined ? {} : { after }),
      ...(limit === undefined ? {} : { limit }),
    });
  }

  /**
   * Runs the pause work in this call until none is left (holding the jobs pending before each
   * active pause, giving back each resuming pause's held jobs), in transactions of at most
   * WORK_BATCH jobs: for a process that does not start the scheduler (the CLI on a local
   * file), as runOperation is for operations. A started scheduler does this in the background.
   * When it resolves no pause has work left, even while a keeper's pass (this process's,
   * started by pause(), or another node's) held a pause: its steps wait for that pass's
   * (`wait`), where they would skip the pause and end with its work not done. The counts are
   * this call's; jobs the other pass moved are not in them.
   */
  async runWork(): Promise<{ held: number; released: number }> {
    const pauses = this.pauses();
    let held = 0;
    let released = 0;
    for (;;) {
      const r = await pauses.pausesWork({
        now: this.d.clock.now(),
        limit: WORK_BATCH,
        wait: true,
      });
      held += r.held;
      released += r.released;
      if (!r.more) return { held, released };
    }
  }

  /** Jobs held by pauses now (of `tenant`, or all); 0 for a store without pauses. */
  async pausedJobs(opts: { tenant?: string } = {}): Promise<number> {
    const pauses = this.d.store.pauses;
    if (!pauses) return 0;
    return pauses.pausedJobsCount(opts.tenant === undefined ? {} : { tenant: opts.tenant });
  }

  private pauses(): PauseStore {
    const pauses = this.d.store.pauses;
    if (!pauses) throw new PausesUnsupportedError(this.d.store.kind);
    return pauses;
  }
}

/** The Scheduler's methods for pauses by tenant, target or tag. */
export interface PauseMethods {
  /**
   * Pauses a tenant's jobs ({ scope: { tenant: true } | { target } | { tag }, onResume }):
   * they are held (never claimed) until `resume`; see PauseOperations.pause.
   */
  pause(input: PauseInput, opts?: PauseCallOptions): Promise<Pause>;

  /** Resumes a pause; its held jobs go back by its onResume policy (PauseOperations.resume). */
  resume(id: string, opts?: PauseCallOptions): Promise<Pause>;

  /** One pause, or null. With `tenant`, another tenant's pause is null too. */
  getPause(id: string, opts?: PauseCallOptions): Promise<Pause | null>;

  /** Pauses in creation order; by default the active and resuming ones; `after`/`limit` page. */
  listPauses(opts?: ListPausesOptions): Promise<Pause[]>;

  /**
   * Runs every pause's pending work in this call until none is left (PauseOperations.runWork):
   * for a process that does not start the scheduler, such as the CLI on a local file.
   */
  runPauseWork(): Promise<{ held: number; released: number }>;
}

/** The pause methods of a Scheduler whose PauseOperations `pauses` gives. */
export function pauseMethods<S>(pauses: (self: S) => PauseOperations): PauseMethods & ThisType<S> {
  return {
    pause(input, opts = {}) {
      return pauses(this).pause(input, opts);
    },
    resume(id, opts = {}) {
      return pauses(this).resume(id, opts);
    },
    getPause(id, opts = {}) {
      return pauses(this).get(id, opts);
    },
    listPauses(opts = {}) {
      return pauses(this).list(opts);
    },
    runPauseWork() {
      return pauses(this).runWork();
    },
  };
}
