import { openSync, readSync, closeSync } from "node:fs";
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

describe("SQLite checkpointer", () => {
  it("starts the WAL over again and again under sustained writes, instead of growing it", async () => {
    const path = join(dir.path, "busy.db");
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("wal_autocheckpoint = 0");
    db.pragma("busy_timeout = 5000");
    db.exec("CREATE TABLE t (x BLOB)");
    const insert = db.prepare("INSERT INTO t (x) VALUES (randomblob(3000))");
    insert.run();
    const first = walSequence(path);
    const checkpointer = new Checkpointer(path, {
      intervalMs: 10,
      restartFrames: 256,
      restartBacklog: 256,
    });
    try {
      // A writer that never pauses (a PASSIVE checkpoint alone never catches it, so the WAL
      // would only ever grow), yielding to the event loop as a real one does. Bounded: 20 s.
      const deadline = performance.now() + 20_000;
      while (walSequence(path) < first + 3 && performance.now() < deadline) {
        for (let i = 0; i < 100; i++) insert.run();
        await new Promise((r) => setImmediate(r));
      }
      // the WAL started over three times while the writes went on
      expect(walSequence(path)).toBeGreaterThanOrEqual(first + 3);
      expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBeGreaterThan(1);
    } finally {
      await checkpointer.stop();
      db.close();
    }
  });
});
