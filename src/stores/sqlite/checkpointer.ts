import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** When the checkpointer runs and when it starts the WAL over. */
export interface CheckpointerOptions {
  /** How often to look for new commits, in ms. Default 500. */
  readonly intervalMs?: number;
  /** WAL size, in frames (pages), from which a pass is followed by a RESTART. Default 16,384 (64 MiB of 4 KiB pages). */
  readonly restartFrames?: number;
  /**
   * The RESTART runs only once at most this many frames are left to copy (what writers
   * committed during the last pass), so the writer waits for a short copy. Default 4,096.
   */
  readonly restartBacklog?: number;
  /**
   * The RESTART's whole budget, in ms: waiting for the writer's lock, then (holding it) for
   * readers still on the WAL. A writer may wait this long. Default 100.
   */
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
 * A PASSIVE checkpoint never catches a writer that never pauses: by the time it has copied
 * the WAL back, newer commits sit behind it, so the WAL never starts over and grows for as
 * long as the writes go on (1.2 GB after 60k one-job commits). Appending to an ever longer
 * file halves the commit rate (measured on the 10M backlog: a plain one-row insert went from
 * 33 to 67 us, and the same with no checkpoint at all; with the WAL reused at a bounded size
 * it stays at 18-45 us). So once the WAL holds `restartFrames` frames, the worker runs more
 * PASSIVE passes until at most `restartBacklog` frames are left to copy, then a RESTART
 * checkpoint: it takes the writer's lock, copies the rest back, syncs, waits for readers to
 * leave the WAL, and the next commit writes the WAL from its start. Writers wait for that
 * step: the copy, plus waits bounded by `restartWaitMs`. If the backlog never gets that small (writes outrun the
 * passes), the RESTART runs anyway once the WAL holds four times `restartFrames`, so the file
 * stays bounded. With other connections in the way (a reader, another checkpoint) the
 * RESTART gives up and the next tick tries again.
 *
 * The worker is unref'd: it never keeps the process alive.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private stopped = false;
  private exited = false;

  constructor(path: string, options: CheckpointerOptions = {}) {
    const modulePath = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path,
        modulePath,
        intervalMs: options.intervalMs ?? 500,
        restartFrames: options.restartFrames ?? 16_384,
        restartBacklog: options.restartBacklog ?? 4096,
        restartWaitMs: options.restartWaitMs ?? 100,
      },
    });
    this.worker.unref();
    this.worker.once("exit", () => {
      this.exited = true;
    });
    // A failed checkpoint is retried on the next tick by the worker; a dead worker only
    // means checkpoints stop (the WAL grows), so report it rather than crash the process.
    this.worker.on("error", (err) => {
      if (!this.stopped) process.emitWarning(`duetime checkpointer stopped: ${err.message}`);
    });
  }

  /** Stops the worker after a last PASSIVE checkpoint (at once if it has already died). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.ref(); // hold the process until the last checkpoint is done
    this.worker.postMessage("stop");
    await exited;
  }
}

// CommonJS, run with eval: no file to find whatever the loader (tsx, vitest, dist).
// wal_checkpoint returns { busy, log, checkpointed }: busy = 1 (and -1 counts) when another
// connection holds the checkpoint lock; NOOP only reads the counts.
const WORKER_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads");
const Database = require(workerData.modulePath);
const db = new Database(workerData.path);
db.pragma("busy_timeout = 0");
const passive = () => db.pragma("wal_checkpoint(PASSIVE)")[0];
const leftToCopy = () => {
  const now = db.pragma("wal_checkpoint(NOOP)")[0];
  return now.log - now.checkpointed;
};
const restart = () => {
  db.pragma("busy_timeout = " + workerData.restartWaitMs);
  try {
    db.pragma("wal_checkpoint(RESTART)");
  } finally {
    db.pragma("busy_timeout = 0");
  }
};
// data_version changes when another connection commits: an idle database costs one cheap
// pragma per tick, not a checkpoint.
let seen = -1;
const checkpoint = () => {
  try {
    const version = db.pragma("data_version", { simple: true });
    if (version === seen) return;
    let pass = passive();
    if (pass.busy) return;
    seen = version;
    if (pass.log < workerData.restartFrames) return;
    // Sustained writes: pass again until what came in meanwhile is small, then start over.
    let left = leftToCopy();
    for (let i = 0; i < 8 && left > workerData.restartBacklog; i++) {
      pass = passive();
      if (pass.busy) return;
      left = leftToCopy();
    }
    if (left > workerData.restartBacklog && pass.log < 4 * workerData.restartFrames) return;
    restart();
  } catch (err) { /* busy: next tick */ }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m !== "stop") return;
  clearInterval(timer);
  try { passive(); } catch (err) { /* the last connection to close checkpoints anyway */ }
  db.close();
  process.exit(0);
});
`;
