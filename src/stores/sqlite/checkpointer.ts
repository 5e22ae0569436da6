import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * Runs SQLite's WAL checkpoints on a worker thread with its own connection.
 *
 * With auto-checkpoint on, the commit that crosses the WAL threshold copies the WAL back into
 * the database file itself, synchronously: on a large file that is tens of milliseconds of
 * random writes and fsyncs inside one `jobsSettle`, which is exactly when timing-wheel timers
 * fire late. The store turns auto-checkpoint off on its connection and this worker runs
 * PASSIVE checkpoints (they never wait for or block writers) every `intervalMs` when something
 * was committed since the last one, off the event loop. The worker is unref'd: it never keeps the process alive.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private stopped = false;

  constructor(path: string, intervalMs = 500) {
    const modulePath = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, intervalMs, modulePath },
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
    db.pragma("wal_checkpoint(PASSIVE)");
    seen = version;
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
