import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** When the checkpointer runs and when it starts the WAL over. */
export interface CheckpointerOptions {
  /** How often to look for new commits, in ms. Default 500. */
  readonly intervalMs?: number;
  /** WAL frames (pages) left after a PASSIVE pass that trigger a RESTART. Default 16,384 (64 MiB of 4 KiB pages). */
  readonly restartFrames?: number;
  /** At most this many frames left to copy when the RESTART starts. Default 4,096. */
  readonly restartBacklog?: number;
  /** How long the RESTART waits for the writer's lock, in ms. Default 1000. */
  readonly restartWaitMs?: number;
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
 * A PASSIVE checkpoint never catches a busy writer: by the time it has copied the WAL back,
 * newer commits sit behind it, so the WAL never starts over and grows for as long as the
 * writes go on (1.2 GB after 60k one-job commits). Appending to an ever longer file halves
 * the commit rate (measured on the 10M backlog: a plain one-row insert went from 33 to 67 us,
 * and the same with no checkpoint at all; with the WAL reused at a bounded size it stays at
 * 33-45 us). So when a PASSIVE pass leaves more than `restartFrames` frames in the WAL, the
 * worker runs a RESTART checkpoint: it waits for the writer's lock (up to `restartWaitMs`),
 * copies back the frames committed during the pass, syncs, and the next commit writes the
 * WAL from its start. Writers wait for that short step only, and only under sustained writes.
 *
 * The worker is unref'd: it never keeps the process alive.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private stopped = false;

  constructor(path: string, options: CheckpointerOptions = {}) {
    const modulePath = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path,
        modulePath,
        intervalMs: options.intervalMs ?? 500,
        restartFrames: options.restartFrames ?? 16_384,
        restartWaitMs: options.restartWaitMs ?? 1000,
        restartBacklog: options.restartBacklog ?? 4096,
      },
    });
    this.worker.unref();
    // A failed checkpoint is retried on the next tick by the worker; a dead worker only
    // means checkpoints stop (the WAL grows), so report it rather than crash the process.
    this.worker.on("error", (err) => {
      if (!this.stopped) process.emitWarning(`duetime checkpointer stopped: ${err.message}`);
    });
  }

  /** Stops the worker after a last checkpoint. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.ref(); // hold the process until the last checkpoint is done
    this.worker.postMessage("stop");
    await exited;
  }
}

// CommonJS, run with eval: no file to find whatever the loader (tsx, vitest, dist).
const WORKER_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads");
const Database = require(workerData.modulePath);
const db = new Database(workerData.path);
db.pragma("busy_timeout = 0");
// data_version changes when another connection commits: an idle database costs one cheap
// pragma per tick, not a checkpoint.
let seen = -1;
const checkpoint = () => {
  try {
    const version = db.pragma("data_version", { simple: true });
    if (version === seen) return;
    let [pass] = db.pragma("wal_checkpoint(PASSIVE)");
    seen = version;
    if (pass.log < workerData.restartFrames) return;
    // Sustained writes: more passes until little is left to copy, then copy that under the
    // writer's lock and start the WAL over (the writer waits for that short step only).
    for (let i = 0; i < 8 && pass.log - pass.checkpointed > workerData.restartBacklog; i++) {
      [pass] = db.pragma("wal_checkpoint(PASSIVE)");
    }
    if (pass.log - pass.checkpointed > workerData.restartBacklog) return;
    db.pragma("busy_timeout = " + workerData.restartWaitMs);
    try {
      db.pragma("wal_checkpoint(RESTART)");
    } finally {
      db.pragma("busy_timeout = 0");
    }
  } catch (err) { /* busy: next tick */ }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m !== "stop") return;
  clearInterval(timer);
  seen = -1;
  checkpoint();
  db.close();
  process.exit(0);
});
`;
