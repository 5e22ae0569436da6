import type { Clock } from "../core/clock.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";
import type { Job } from "../core/job.js";
import { pauseCovering, type PauseWorkResult } from "../core/pause.js";
import type { PauseStore } from "../store/pause-store.js";
import type { Logger } from "./logger.js";

/** Longest a pass spends, in ms: holding a million jobs never competes with firing for long. */
const DEFAULT_PASS_BUDGET_MS = 200;

/** What a PauseKeeper is made of. */
export interface PauseKeeperDeps {
  readonly pauses: PauseStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Pause between passes in ms while no work is left (another process's pauses). */
  readonly intervalMs: number;
  /** Jobs per transaction. Default 5000. */
  readonly batchSize?: number;
  /** Longest a pass spends before it leaves the rest to the next one, in ms. Default 200. */
  readonly passBudgetMs?: number;
  /** Called after a pass gave jobs back (they may be due now). */
  readonly onReleased: () => void;
  /** How many claims wait unstarted on this node (the wheel). */
  readonly waiting: () => number;
  /** Hands back this node's unstarted claims that `covered` picks. */
  readonly handBack: (covered: (job: Job) => boolean) => Promise<void>;
  /** The node's loops that recover together (see LoopGroup). Default: none. */
  readonly loops?: LoopGroup;
}

/**
 * Does the pauses' work in bounded batches (PauseStore.pausesWork): moves the jobs that were
 * pending when a pause was made out of the due-time index, and gives a resumed pause's held
 * jobs back by its policy. Woken at once by this node's pause and resume (`runNow`); the
 * periodic pass picks up those made by another process sharing the store. A pass that left
 * work asks its loop for the next one at once (the loop's timer of 0 ms lets the event loop
 * have its turn first), so a large pause finishes in a steady stream of short writes.
 *
 * Each pass also hands back this node's unstarted claims (the timing wheel) that an active
 * pause covers, whichever node made it: a claim taken before the pause committed must not
 * fire. The store's pause notification (onPausesChanged, PostgreSQL) runs a pass at once;
 * without one, the periodic pass is how this node learns of another process's pause.
 * The pauses are read only while claims are waiting.
 */
export class PauseKeeper {
  private readonly loop: ServiceLoop;

  constructor(private readonly d: PauseKeeperDeps) {
    this.loop = new ServiceLoop({
      name: "pause-keeper",
      clock: d.clock,
      logger: d.logger,
      ...(d.loops === undefined ? {} : { group: d.loops }),
      pass: async () => ((await this.runOnce()).more ? 0 : this.d.intervalMs),
    });
  }

  /** Starts the passes, the first at once. */
  start(): void {
    this.loop.start(0);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * Runs a pass now (while started; see ServiceLoop.runNow): a pause or resume made here,
   * or the store's notification of one made elsewhere.
   */
  runNow(): Promise<void> {
    return this.loop.runNow();
  }

  /**
   * One time-boxed pass of the pause work, then the hand-back of covered claims; `more`
   * when it stopped at its budget with work left.
   */
  async runOnce(): Promise<PauseWorkResult> {
    const limit = this.d.batchSize ?? 5000;
    const budget = this.d.passBudgetMs ?? DEFAULT_PASS_BUDGET_MS;
    const started = Date.now();
    let held = 0;
    let released = 0;
    let more = false;
    for (;;) {
      const r = await this.d.pauses.pausesWork({ now: this.d.clock.now(), limit });
      held += r.held;
      released += r.released;
      more = r.more;
      if (!more || Date.now() - started >= budget) break;
    }
    await this.handBackCovered();
    if (released > 0) this.d.onReleased();
    if (held > 0 || released > 0) this.d.logger.info({ held, released }, "pause work");
    return { held, released, more };
  }

  private async handBackCovered(): Promise<void> {
    if (this.d.waiting() === 0) return;
    const active = await this.d.pauses.pausesList({ states: ["active"] });
    if (active.length > 0) await this.d.handBack((job) => pauseCovering(active, job) !== undefined);
  }
}
