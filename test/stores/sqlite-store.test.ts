import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../src/core/errors.js";
import { openStore } from "../../src/stores/open-store.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir();
afterAll(() => dir.cleanup());

describe("SQLite store specifics", () => {
  it("keeps the bucket width a file was created with, and refuses another", async () => {
    const path = join(dir.path, "minute.db");
    const created = await openStore(path, { bucketGranularity: "minute" });
    expect(created.bucketWidthMs).toBe(60_000);
    await created.close();
    const reopened = await openStore(path);
    expect(reopened.bucketWidthMs).toBe(60_000);
    await reopened.close();
    // asked in granularity terms, answered in them; the store itself speaks in ms
    await expect(openStore(path, { bucketGranularity: "day" })).rejects.toThrow(
      'option bucketGranularity: expected "minute" (the granularity this database was created with), received "day"',
    );
    expect(() => new SqliteStore({ path, bucketWidthMs: 86_400_000 })).toThrow(
      "option bucketWidthMs: expected 60000 (the value this database was created with), received 86400000",
    );
    // the refused open did not leave the file locked or half-open: it opens again fine
    const again = new SqliteStore({ path });
    expect(again.bucketWidthMs).toBe(60_000);
    await again.close();
  });

  it("defaults a new file to hour buckets", async () => {
    const s = await openStore(join(dir.path, "new.db"));
    expect(s.bucketWidthMs).toBe(3_600_000);
    await s.close();
  });

  it("checkpoints the WAL on a worker thread, so commits never do it on the event loop", async () => {
    const path = join(dir.path, "wal.db");
    const store = new SqliteStore({ path });
    expect(store.connection.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    const batch = (offset: number) =>
      Array.from({ length: 2000 }, (_, i) => ({
        id: `01J${String(offset + i).padStart(23, "0")}`,
        tenant: "default",
        key: null,
        dueAt: Date.UTC(2026, 0, 2) + i,
        payload: "x".repeat(2000),
        target: "t",
        targetOptions: null,
        maxAttempts: 3,
        expireAfterMs: null,
      }));
    await store.jobsInsert({ jobs: batch(0), now: 0 });
    const first = statSync(`${path}-wal`).size;
    expect(first).toBeGreaterThan(4_000_000);
    // the worker checkpoints every 500 ms; once it has, the next writes reuse the WAL from
    // its start instead of growing it (auto-checkpoint being off, only the worker can do it)
    await new Promise((r) => setTimeout(r, 1500));
    await store.jobsInsert({ jobs: batch(2000), now: 0 });
    expect(statSync(`${path}-wal`).size).toBeLessThan(first * 1.5);
    await store.close();
  });

  it("opens without a checkpoint worker when asked (SQLite's own auto-checkpoint then runs)", async () => {
    const path = join(dir.path, "one-shot.db");
    const plain = await openStore(path, { backgroundCheckpoints: false });
    expect((plain as SqliteStore).connection.pragma("wal_autocheckpoint", { simple: true })).toBe(
      1000,
    );
    await plain.close();
    const worker = await openStore(path);
    expect((worker as SqliteStore).connection.pragma("wal_autocheckpoint", { simple: true })).toBe(
      0,
    );
    await worker.close();
  });

  it("refuses bad options by name", () => {
    expect(() => new SqliteStore({ path: "" })).toThrow(InvalidOptionError);
    expect(
      () => new SqliteStore({ path: ":memory:", backgroundCheckpoints: "false" as never }),
    ).toThrow('option backgroundCheckpoints: expected true or false, received "false"');
    expect(() => new SqliteStore({ path: ":memory:", bucketWidthMs: 5 })).toThrow(
      "option bucketWidthMs: expected an integer of at least 1000, received 5",
    );
  });
});
