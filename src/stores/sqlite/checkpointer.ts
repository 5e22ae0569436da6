import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** When the checkpointer runs and when it starts the WAL over. */
export interface CheckpointerOptions {
  /** How often to look for new commits, in ms. Default 500. */
  readonly intervalMs?: number;
  /** WAL size, in frames (pages), from which the WAL is drained and started over. Default 16,384 (64 MiB of 4 KiB pages). */
  readonly restartFrames?: number;
  /**
   * A RESTART (which makes writers wait) runs only once at most this many frames are left to
   * copy, so the writer waits for a short copy. Default 4,096.
   */
  readonly restartBacklog?: number;
  /**
   * The RESTART's whole budget, in ms: waiting for the writer's lock, then (holding it) for
   * readers still on the WAL. A writer may wait this long. Default 100.
   */
  readonly restartWaitMs?: number;
  /**
   * Longest a drain asks bulk writers to hold off (see walHold), in ms. Default 1000.
   */
  readonly maxHoldMs?: number;
}

/**
 * Runs SQLite's WAL checkpoints on a worker thread with its own connection.
 *
 * With auto-checkpoint on, the commit that crosses the WAL threshold copies the WAL back into
 * the database file itself, synchronously: on a large file that is tens of milliseconds of
 * random writes and fsyncs inside one `jobsSettle`, which is exactly when timing-wheel timers
 * fire late. The store turns auto-checkpoint off on its connection and this worker runs
 * PASSIVE checkpoints (they never wait for or block writers) every `intervalMs` when
 * something was committed since the last one, off the event loop.
 *
 * A PASSIVE checkpoint never catches a writer that never pauses: by the time it has copied
 * the WAL back, newer commits sit behind it, so the WAL never starts over and grows for as
 * long as the writes go on (1.2 GB after 60k one-job commits; 189 MiB in 14 s of a bulk
 * cancel, bench/bulk-statements.ts). Appending to an ever longer file halves the commit rate (measured on the 10M
 * backlog: a plain one-row insert went from 33 to 67 us, and the same with no checkpoint at
 * all; with the WAL reused at a bounded size it stays at 18-45 us). So once the WAL holds
 * `restartFrames` frames the worker drains it:
 *
 * - it asks the store's bulk writers (operation batches, the bulk of the frames) to hold off
 *   (walHold), while firing goes on, and runs PASSIVE passes a few ms apart. Once a pass
 *   finds nothing new, a RESTART copies nothing and holds the writer's lock only to check
 *   for readers; the next commit starts the WAL over.
 * - if small commits keep arriving (firing), after 25 passes and once at most
 *   `restartBacklog` frames are left it runs a RESTART: it takes the writer's lock, copies
 *   the rest back, syncs, waits for readers to leave the WAL. Writers wait for that step: a
 *   short copy, plus waits bounded by `restartWaitMs`. Before the hold, a RESTART waited for the writer's lock that a bulk
 *   cancel gave up only between batches, mostly in vain, and when it got it copied the
 *   backlog while the writer waited: one operation batch of 353 ms, its BEGIN waiting.
 * - the hold lasts at most `maxHoldMs`. If the backlog never gets small (writes outrun the
 *   passes), the RESTART runs anyway once the WAL holds four times `restartFrames`, so the
 *   file stays bounded. With other connections in the way (a reader, another checkpoint)
 *   the RESTART gives up and the next tick tries again.
 *
 * The worker is unref'd: it never keeps the process alive.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private stopped = false;
  private exited = false;
  /** While a drain asks bulk writers to wait: resolves when it is over. */
  private hold: { promise: Promise<void>; release: () => void } | null = null;
  private readonly maxHoldMs: number;

  constructor(path: string, options: CheckpointerOptions = {}) {
    const modulePath = createRequire(import.meta.url).resolve("better-sqlite3");
    this.maxHoldMs = options.maxHoldMs ?? 1000;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path,
        modulePath,
        intervalMs: options.intervalMs ?? 500,
        restartFrames: options.restartFrames ?? 16_384,
        restartBacklog: options.restartBacklog ?? 4096,
        restartWaitMs: options.restartWaitMs ?? 100,
        maxHoldMs: this.maxHoldMs,
      },
    });
    this.worker.unref();
    this.worker.on("message", (m: unknown) => {
      if (m === "hold") this.startHold();
      else if (m === "release") this.endHold();
    });
    this.worker.once("exit", () => {
      this.exited = true;
      this.endHold();
    });
    // A failed checkpoint is retried on the next tick by the worker; a dead worker only
    // means checkpoints stop (the WAL grows), so report it rather than crash the process.
    this.worker.on("error", (err) => {
      if (!this.stopped) process.emitWarning(`duetime checkpointer stopped: ${err.message}`);
    });
  }

  /**
   * While the worker drains a large WAL: a promise that resolves when it is done (at most
   * maxHoldMs, twice that if the worker never answers), or after `atMostMs` when given,
   * whichever comes first. Writers of bulk work wait for it before their next transaction;
   * null when there is nothing to wait for.
   */
  walHold(atMostMs?: number): Promise<void> | null {
    const hold = this.hold?.promise;
    if (hold === undefined) return null;
    if (atMostMs === undefined) return hold;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const elapsed = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, atMostMs);
    });
    return Promise.race([hold, elapsed]).finally(() => clearTimeout(timer));
  }

  private startHold(): void {
    if (this.hold !== null) return;
    let release = (): void => {};
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    // the worker's own bound is maxHoldMs; this one only guards a worker that stopped answering
    const guard = setTimeout(() => this.endHold(), 2 * this.maxHoldMs);
    guard.unref();
    this.hold = {
      promise,
      release: () => {
        clearTimeout(guard);
        release();
      },
    };
  }

  private endHold(): void {
    const hold = this.hold;
    this.hold = null;
    hold?.release();
  }

  /** Stops the worker after a last PASSIVE checkpoint (at once if it has already died). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.endHold();
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.ref(); // hold the process until the last checkpoint is done
    this.worker.postMessage("stop");
    await exited;
  }
}

// CommonJS, run with eval: no file to find whatever the loader (tsx, vitest, dist).
// wal_checkpoint returns { busy, log, checkpointed }: busy = 1 (and -1 counts) when another
// connection holds the checkpoint lock.
const WORKER_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads");
const Database = require(workerData.modulePath);
const w = workerData;
const db = new Database(w.path);
db.pragma("busy_timeout = 0");
const passive = () => db.pragma("wal_checkpoint(PASSIVE)")[0];
// Whether the RESTART completed (busy: a writer or reader outlasted restartWaitMs).
const restart = () => {
  db.pragma("busy_timeout = " + w.restartWaitMs);
  try {
    return db.pragma("wal_checkpoint(RESTART)")[0].busy === 0;
  } finally {
    db.pragma("busy_timeout = 0");
  }
};
// Bulk writers hold off while "hold" is in force (Checkpointer.walHold).
let holding = false;
const setHold = (on) => {
  if (on === holding) return;
  holding = on;
  parentPort.postMessage(on ? "hold" : "release");
};
// A drain: PASSIVE passes DRAIN_STEP_MS apart (timers between them let the main thread see
// the hold and stop). A pass reports the WAL as it was when it began, so the WAL is known to
// be copied back only when a pass finds nothing that the one before it had not: then a
// RESTART copies nothing (no sync) and only checks for readers, and the next commit starts
// the WAL over. Small commits (firing) may keep coming between passes; a RESTART that copies
// them holds the writer's lock through the copy and two syncs, so it waits for DRAIN_PASSES
// passes first (firing's commits leave gaps: a quiet pass came within 3 in the runs seen).
// After maxHoldMs the hold ends, with a RESTART only if the WAL holds four times the
// restart size, and no drain holds the writers again for NO_HOLD_AFTER_FAIL hold lengths (a
// reader that never leaves the WAL would otherwise keep the bulk writers waiting two thirds
// of the time, for nothing).
const DRAIN_STEP_MS = 2;
const DRAIN_PASSES = 25;
const NO_HOLD_AFTER_FAIL = 4;
let drainTimer = null;
let noHoldUntil = 0;
const drainFailed = () => {
  noHoldUntil = Date.now() + NO_HOLD_AFTER_FAIL * w.maxHoldMs;
  setHold(false);
};
const drainStep = (startedAt, passes, lastLog) => {
  drainTimer = null;
  let log = lastLog;
  try {
    const pass = passive();
    const left = pass.busy ? Infinity : pass.log - pass.checkpointed;
    log = pass.busy ? -1 : pass.log;
    const quiet = left === 0 && pass.log === lastLog;
    if ((quiet || (left <= w.restartBacklog && passes + 1 >= DRAIN_PASSES)) && restart()) {
      return setHold(false);
    }
    if (Date.now() - startedAt >= w.maxHoldMs) {
      if (pass.log >= 4 * w.restartFrames && restart()) return setHold(false);
      return drainFailed();
    }
  } catch (err) {
    /* busy: a later step or tick tries again */
    if (Date.now() - startedAt >= w.maxHoldMs) return drainFailed();
  }
  drainTimer = setTimeout(() => drainStep(startedAt, passes + 1, log), DRAIN_STEP_MS);
};
// data_version changes when another connection commits: an idle database costs one cheap
// pragma per tick, not a checkpoint.
let seen = -1;
const checkpoint = () => {
  if (drainTimer !== null) return;
  try {
    const version = db.pragma("data_version", { simple: true });
    if (version === seen) return;
    const pass = passive();
    if (pass.busy) return;
    seen = version;
    if (pass.log < w.restartFrames) return;
    if (Date.now() < noHoldUntil) {
      // after a failed drain: only the bound on the WAL's size
      if (pass.log >= 4 * w.restartFrames) restart();
      return;
    }
    setHold(true);
    drainTimer = setTimeout(() => drainStep(Date.now(), 0, pass.log), DRAIN_STEP_MS);
  } catch (err) { /* busy: next tick */ }
};
const timer = setInterval(checkpoint, w.intervalMs);
parentPort.on("message", (m) => {
  if (m !== "stop") return;
  clearInterval(timer);
  if (drainTimer !== null) clearTimeout(drainTimer);
  setHold(false);
  try { passive(); } catch (err) { /* the last connection to close checkpoints anyway */ }
  db.close();
  process.exit(0);
});
`;
