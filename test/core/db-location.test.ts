import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeDbLocation, parseDbLocation } from "../../src/core/db-location.js";
import { InvalidOptionError } from "../../src/core/errors.js";
import { openKeyStore, openStore } from "../../src/stores/open-store.js";
import { tempDir } from "../support/temp-dir.js";

/**
 * One reading of a database location (issue 11 §1): the job store, the key store, the CLI's
 * checks and the logs each parsed it on their own before (four copies of the URL test).
 */
describe("parseDbLocation", () => {
  it("reads SQLite paths with or without a prefix, and :memory:", () => {
    expect(parseDbLocation("./jobs.db")).toEqual({
      kind: "sqlite",
      path: "./jobs.db",
      file: "./jobs.db",
    });
    expect(parseDbLocation("sqlite:/var/x.db")).toMatchObject({ path: "/var/x.db" });
    expect(parseDbLocation("file:///var/x.db")).toMatchObject({ path: "/var/x.db" });
    expect(parseDbLocation("SQLITE://rel.db")).toMatchObject({ path: "rel.db" });
    expect(parseDbLocation(":memory:")).toEqual({ kind: "sqlite", path: ":memory:", file: null });
  });

  it("keeps a PostgreSQL connection string whole, several hosts included", () => {
    // the store's own parser (src/stores/postgres/url.ts) reads its hosts and parameters
    const url =
      "postgres://u:p@h1:5432,h2:5433/app?schema=tenant_a&target_session_attrs=read-write";
    expect(parseDbLocation(url)).toEqual({ kind: "postgres", url });
    expect(parseDbLocation("PostgreSQL://db/app")).toEqual({
      kind: "postgres",
      url: "PostgreSQL://db/app",
    });
  });

  it("refuses a blank location, naming the option", () => {
    for (const bad of ["", "   ", 5, undefined]) {
      expect(() => parseDbLocation(bad, "--db")).toThrow(
        /^option --db: expected a SQLite file path or a postgres:\/\/ URL/,
      );
    }
  });

  it("shows a location with its password hidden", () => {
    expect(describeDbLocation("postgres://app:s3cr3t@db:5432/x")).toBe(
      "postgres://app:***@db:5432/x",
    );
    expect(describeDbLocation("postgres://app:s3cr3t@h1,h2/x")).toBe("postgres://app:***@h1,h2/x");
    expect(describeDbLocation("./jobs.db")).toBe("./jobs.db");
  });
});

describe("the store factory reads locations through it", () => {
  it("opens the job store and the key store of one SQLite file, and refuses a blank one alike", async () => {
    const dir = tempDir("duetime-location-");
    const db = `sqlite:${join(dir.path, "jobs.db")}`;
    const store = await openStore(db, { backgroundCheckpoints: false });
    const keys = await openKeyStore(db);
    expect(store.location).toBe(join(dir.path, "jobs.db"));
    await keys.close();
    await store.close();
    // The key store used to open a file named "  " here.
    await expect(openKeyStore("  ")).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(openStore("  ")).rejects.toBeInstanceOf(InvalidOptionError);
    dir.cleanup();
  });
});
