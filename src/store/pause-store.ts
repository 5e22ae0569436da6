import type {
  NewPause,
  Pause,
  PauseInsertResult,
  PauseResumeResult,
  PauseState,
  PauseWorkResult,
} from "../core/pause.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { LoopGroup } from "../core/loop.js";

/** The engine's clock, logger and loops, for a store's listening loop (onPausesChanged). */
export interface PauseListenLoop {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly loops?: LoopGroup;
}

/** What `pausesList` takes: whose pauses, in which states, and a page of them. */
export interface PauseListQuery {
  readonly tenant?: string;
  readonly states?: readonly PauseState[];
  /** A pause id: those made after it. */
  readonly after?: string;
  readonly limit?: number;
}

/**
 * The pause members of the store contract (issue 13 §4; src/core/pause.ts says what a pause
 * does). Every store implements them; the contract suite runs their cases on each.
 *
 * Holding is exact from the moment `pauseInsert` commits: a claim, on any node sharing the
 * store, never takes a pending job an active pause covers (it moves it to held instead), and
 * `jobsInsert` stores covered jobs held. Moving the jobs that were pending before the pause
 * out of the due-time index is `pausesWork`'s bounded batches, so a pause of a million jobs
 * never holds a write lock for long; until they are moved the claim holds any it meets.
 * Claims a node took before the pause committed are its engine's to hand back: it learns of
 * pauses made elsewhere through `onPausesChanged` where the store has it, and otherwise at
 * its PauseKeeper's next pass.
 */
export interface PauseStore {
  /**
   * Stores an active pause; with `maxOpen`, only while its tenant has fewer open (active or
   * resuming) pauses, counted in the insert's transaction so that pauses made at once on
   * any number of nodes never pass the bound together.
   */
  pauseInsert(params: {
    pause: NewPause;
    now: number;
    maxOpen?: number;
  }): Promise<PauseInsertResult>;

  /** One pause by id, or null. With `tenant`, a pause of another tenant is null too. */
  pauseGet(params: { id: string; tenant?: string }): Promise<Pause | null>;

  /**
   * Pauses in id (creation) order, of `tenant` (or all), in `states` (or all): those after
   * the id `after` when given, at most `limit` when given (a page; the next starts after
   * its last id).
   */
  pausesList(params: PauseListQuery): Promise<Pause[]>;

  /**
   * Resumes an active pause: `resuming` at `now`; its held jobs are given back by
   * `pausesWork` (each by the pause's policy), and stay held, never claimed, until then.
   */
  pauseResume(params: { id: string; tenant?: string; now: number }): Promise<PauseResumeResult>;

  /**
   * One bounded step of every pause's work, at most `limit` jobs: moving the pending jobs of
   * an active pause into held, or giving back a resuming pause's held jobs by its policy
   * (`resumeAction`); a resuming pause with none left becomes `resumed`. A pause whose step
   * another caller is running (PostgreSQL: its row locked by a keeper on any node) is
   * skipped, unless `wait`: then the step waits for that one to end, so a caller repeating
   * it while `more` is sure no work is left when `more` is false (runPauseWork).
   */
  pausesWork(params: { now: number; limit: number; wait?: boolean }): Promise<PauseWorkResult>;

  /**
   * Removes at most `limit` resumed pauses resumed before `before` (epoch ms), oldest id
   * first; returns how many. The engine's retention pass calls it with the retention of
   * finished jobs: a resumed pause is history as they are, and holds no job.
   */
  pausesPurge(params: { before: number; limit: number }): Promise<number>;

  /** Jobs held by active or resuming pauses (of `tenant`, or all), from counters. */
  pausedJobsCount(params: { tenant?: string }): Promise<number>;

  /**
   * Optional: calls `listener` soon after a pause is made through any process sharing the
   * store (PostgreSQL: a notification on the schema's channel), and after a reconnect of
   * the listening connection (a notification may have been missed). Returns unsubscribe.
   */
  onPausesChanged?(listener: () => void, loop?: PauseListenLoop): () => void;
}
