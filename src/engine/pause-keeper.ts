import type { Clock } from "../core/clock.js";
import type { LoopGroup } from "../core/loop.js";
import { PeriodicTask } from "../core/periodic-task.js";
import type { Job } from "../core/job.js";
import { pauseCovering } from "../core/pause.js";
import type { PauseStore } from "../store/pause-store.js";
import type { Logger } from "./logger.js";

/** Longest a pass spends, in ms: holding a million jobs never competes with firing for long. */
const PASS_BUDGET_MS = 200;

/**
 * Does the pauses' work in bounded batches (PauseStore.pausesWork): moves the jobs that were
 * pending when a pause was made out of the due-time index, and gives a resumed pause's held
 * jobs back by its policy. Woken at once by this node's pause and resume; the periodic pass
 * picks up those made by another process sharing the store. A pass that left work comes back
 * at once (after yielding), so a large pause finishes in a steady stream of short writes.
 *
 * Each pass also hands back this node's unstarted claims (the timing wheel) that an active
 * pause covers, whichever node made it: a claim taken before the pause committed must not
 * fire. The store's pause notification (onPausesChanged, PostgreSQL) runs a pass at once;
 * without one, the periodic pass is how this node learns of another process's pause.
 * The pauses are read only while claims are waiting.
 */
export class PauseKeeper extends PeriodicTask<{ held: number; released: number }> {
  constructor(
    private readonly d: {
      readonly pauses: PauseStore;
      readonly clock: Clock;
      readonly logger: Logger;
      readonly intervalMs: number;
      /** Jobs per transaction. Default 5000. */
      readonly batchSize?: number;
      /** Called after a pass gave jobs back (they may be due now). */
      readonly onReleased: () => void;
      /** How many claims wait unstarted on this node (the wheel). */
      readonly waiting: () => number;
      /** Hands back this node's unstarted claims that `covered` picks. */
      readonly handBack: (covered: (job: Job) => boolean) => Promise<void>;
      readonly loops?: LoopGroup;
    },
  ) {
    super({
      name: "pause-keeper",
      clock: d.clock,
      logger: d.logger,
      intervalMs: d.intervalMs,
      group: d.loops,
    });
  }

  override async runOnce(): Promise<{ held: number; released: number }> {
    const limit = this.d.batchSize ?? 5000;
    const started = Date.now();
    let held = 0;
    let released = 0;
    for (;;) {
      const r = await this.d.pauses.pausesWork({ now: this.d.clock.now(), limit });
      held += r.held;
      released += r.released;
      if (!r.more) break;
      if (Date.now() - started > PASS_BUDGET_MS) {
        // Work is left: the next pass comes after the event loop had its turn.
        setImmediate(() => void this.runNow().catch(() => {}));
        break;
      }
    }
    await this.handBackCovered();
    if (released > 0) this.d.onReleased();
    if (held > 0 || released > 0) this.d.logger.info({ held, released }, "pause work");
    return { held, released };
  }

  private async handBackCovered(): Promise<void> {
    if (this.d.waiting() === 0) return;
    const active = await this.d.pauses.pausesList({ states: ["active"] });
    if (active.length > 0) await this.d.handBack((job) => pauseCovering(active, job) !== undefined);
  }
}
