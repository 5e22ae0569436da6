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
    await expect(openStore(path, { bucketGranularity: "day" })).rejects.toThrow(
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

  it("refuses bad options by name", () => {
    expect(() => new SqliteStore({ path: "" })).toThrow(InvalidOptionError);
    expect(() => new SqliteStore({ path: ":memory:", bucketWidthMs: 5 })).toThrow(
      "option bucketWidthMs: expected an integer of at least 1000, received 5",
    );
  });
});
