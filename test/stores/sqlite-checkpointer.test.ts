import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { Checkpointer } from "../../src/stores/sqlite/checkpointer.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir("duetime-checkpointer-");
afterAll(() => dir.cleanup());

/** The WAL header's checkpoint sequence number: SQLite adds one each time the WAL starts over. */
function walSequence(path: string): number {
  const fd = openSync(`${path}-wal`, "r");
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

const MiB = 1024 * 1024;

/**
 * A WAL file of 50,000 rows with auto-checkpoint off, as the store's connection has it, and a
 * bulk batch: 100 random rows rewritten in one transaction.
 */
function bulkWriter(name: string) {
  const path = join(dir.path, name);
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("wal_autocheckpoint = 0");
  db.pragma("busy_timeout = 5000");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, x BLOB)");
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
    INSERT INTO t (id, x) SELECT i, zeroblob(150) FROM n`);
  const update = db.prepare(
    "UPDATE t SET x = randomblob(150) WHERE id = 1 + abs(random() % 50000)",
  );
  const batch = db.transaction(() => {
    for (let i = 0; i < 100; i++) update.run();
  });
  return { path, db, batch };
}

/**
 * Another connection holding a read open on an early snapshot: no checkpoint pass can copy
 * past it, so no drain succeeds while it stays. Returns its close.
 */
function snapshotReader(path: string): () => void {
  const reader = new Database(path);
  const open = reader.prepare("SELECT x FROM t").iterate();
  open.next();
  return () => {
    open.return?.();
    reader.close();
  };
}

describe("SQLite checkpointer", () => {
  it("starts the WAL over again and again under sustained writes, instead of growing it", async () => {
    const path = join(dir.path, "busy.db");
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("wal_autocheckpoint = 0");
    db.pragma("busy_timeout = 5000");
    // Updates of random rows over some 2,500 pages: each pass has thousands of pages to
    // copy back and sync, so it never finishes between two commits (one page, as a single
    // hot row would be, is copied in the gap and lets the WAL start over by itself).
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, x BLOB)");
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
      INSERT INTO t (id, x) SELECT i, zeroblob(150) FROM n`);
    const update = db.prepare(
      "UPDATE t SET x = randomblob(150) WHERE id = 1 + abs(random() % 50000)",
    );
    const first = walSequence(path);
    const checkpointer = new Checkpointer(path, { intervalMs: 10, restartFrames: 256 });
    let walMax = 0;
    let sequence = first;
    try {
      // A writer that never pauses (a PASSIVE checkpoint alone never catches it, so the WAL
      // would only ever grow), yielding to the event loop as a real one does. Bounded: 20 s
      // and 256 MiB of WAL.
      const deadline = performance.now() + 20_000;
      while (sequence < first + 3 && performance.now() < deadline) {
        for (let i = 0; i < 100; i++) update.run();
        sequence = walSequence(path);
        walMax = Math.max(walMax, statSync(`${path}-wal`).size);
        if (walMax > 256 * MiB) break;
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      await checkpointer.stop();
      db.close();
    }
    // the WAL started over three times while the writes went on, and never grew large
    expect(sequence).toBeGreaterThanOrEqual(first + 3);
    expect(walMax).toBeLessThan(256 * MiB);
  });

  it("has bulk writers hold off while it drains a large WAL, then starts the WAL over", async () => {
    const { path, db, batch } = bulkWriter("bulk.db");
    const checkpointer = new Checkpointer(path, { intervalMs: 10, restartFrames: 256 });
    let holds = 0;
    const restartedAfterHold: boolean[] = [];
    try {
      // A bulk writer as the store's operation batches are: before each batch it waits for
      // a drain in progress. Bounded: 20 s.
      const deadline = performance.now() + 20_000;
      while (holds < 3 && performance.now() < deadline) {
        const hold = checkpointer.walHold();
        if (hold !== null) {
          holds++;
          const before = walSequence(path);
          await hold;
          batch();
          // the drain copied everything back: this commit wrote the WAL from its start
          restartedAfterHold.push(walSequence(path) > before);
        } else {
          batch();
        }
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      await checkpointer.stop();
      db.close();
    }
    expect(holds).toBe(3);
    expect(restartedAfterHold).toEqual([true, true, true]);
  });

  it("after a drain a reader defeats, leaves the bulk writers alone for four hold lengths", async () => {
    const { path, db, batch } = bulkWriter("reader.db");
    const closeReader = snapshotReader(path);
    const maxHoldMs = 50;
    const checkpointer = new Checkpointer(path, { intervalMs: 10, restartFrames: 256, maxHoldMs });
    const holds: { start: number; end: number }[] = [];
    try {
      const deadline = performance.now() + 20_000;
      while (holds.length < 2 && performance.now() < deadline) {
        const hold = checkpointer.walHold();
        if (hold !== null) {
          const start = performance.now();
          await hold;
          holds.push({ start, end: performance.now() });
        }
        batch();
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      closeReader();
      await checkpointer.stop();
      db.close();
    }
    expect(holds).toHaveLength(2);
    // the second hold started four hold lengths after the first ended (half of that asserted,
    // room for the messages on a loaded machine; without the pause it starts a tick later)
    expect(holds[1]!.start - holds[0]!.end).toBeGreaterThanOrEqual(2 * maxHoldMs);
  });

  it("a bounded wait for a drain ends before the drain does, so a stopping writer is not held", async () => {
    const { path, db, batch } = bulkWriter("bounded.db");
    // the reader keeps the drain from succeeding: the hold lasts its whole maxHoldMs (60 s
    // here), far past the bounded waits below
    const closeReader = snapshotReader(path);
    const checkpointer = new Checkpointer(path, {
      intervalMs: 10,
      restartFrames: 256,
      maxHoldMs: 60_000,
    });
    let bounded = 0;
    try {
      const deadline = performance.now() + 20_000;
      while (bounded < 3 && performance.now() < deadline) {
        const wait = checkpointer.walHold(20);
        if (wait === null) batch();
        else {
          await wait;
          // the bounded wait is over and the hold it waited for is still in force
          expect(checkpointer.walHold()).not.toBeNull();
          bounded++;
        }
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      closeReader();
      await checkpointer.stop();
      db.close();
    }
    expect(bounded).toBe(3);
    expect(checkpointer.walHold()).toBeNull(); // stop ends the hold
  });

  it("stops at once when its worker has already died", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      // the worker cannot open a file in a directory that does not exist, and exits
      const checkpointer = new Checkpointer(join(dir.path, "missing", "x.db"));
      await expect.poll(() => warnings.length, { timeout: 10_000 }).toBeGreaterThan(0);
      expect(warnings[0]).toMatch(/^duetime checkpointer stopped: /);
      await checkpointer.stop(); // resolves: it used to wait forever for an exit already past
    } finally {
      process.off("warning", onWarning);
    }
  });
});
