import { afterEach, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { MIGRATIONS } from "../../src/stores/sqlite/migrations.js";
import { cli, cliJson, ensureBuilt, tempWorkspace } from "./helpers.js";

let ws: ReturnType<typeof tempWorkspace>;
beforeAll(ensureBuilt);
afterEach(() => ws?.cleanup());

describe("duetime migrate", () => {
  it("brings a new SQLite file to the current schema, and is idempotent", async () => {
    ws = tempWorkspace();
    const first = await cliJson<{ migrated: boolean; store: string; bucketWidthMs: number }>([
      "migrate",
      "--db",
      ws.db,
      "--json",
    ]);
    expect(first.code).toBe(0);
    expect(first.body).toMatchObject({ migrated: true, store: "sqlite", bucketWidthMs: 3_600_000 });
    const again = await cli(["migrate", "--db", ws.db]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^migrated: sqlite database .* is up to date/);
    const db = new Database(ws.db, { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    db.close();
  });
});
