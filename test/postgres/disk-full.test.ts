import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { StorageFullError, storageFullIn } from "../../src/core/errors.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { mountable, mountSmallDisk, type SmallDisk } from "../support/small-disk.js";
import { jobMaker } from "./helpers.js";

// a tablespace on a small disk of its own: a server of its own too
const server = usePostgresServer({ own: true });
const T0 = Date.UTC(2026, 3, 10, 12);

/**
 * PostgreSQL's disk_full (SQLSTATE 53100), for real: the store's tables live in a tablespace
 * on a 16 MiB tmpfs (the server's default tablespace for this test's connections), filled to
 * the last byte. The store answers StorageFullError, a batch is all or nothing, and writes
 * succeed again once the space is freed.
 */
describe.skipIf(!mountable())("postgres: disk full", () => {
  let disk: SmallDisk | null = null;
  let store: PostgresStore | null = null;
  let admin: pg.Client | null = null;
  const tablespace = `full_${process.pid}`;
  const schema = freshSchema("full");

  afterEach(async () => {
    try {
      disk?.free();
      await store?.close();
      if (admin) {
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.query(`ALTER ROLE CURRENT_USER RESET default_tablespace`);
        await admin.query(`DROP TABLESPACE IF EXISTS ${tablespace}`);
        await admin.end();
      }
    } finally {
      disk?.unmount(); // always: a mount must not outlive a failed test
    }
  });

  it("answers StorageFullError, writes nothing of the refused batch, and resumes", async () => {
    disk = mountSmallDisk(16);
    const location = join(disk.path, "ts");
    mkdirSync(location);
    execFileSync("chown", ["postgres:postgres", location]);
    admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE TABLESPACE ${tablespace} LOCATION '${location}'`);
    await admin.query(`ALTER ROLE CURRENT_USER SET default_tablespace = ${tablespace}`);
    store = await PostgresStore.open({ url: server.url, schema, bucketWidthMs: 3_600_000 });
    const tables = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablespace = $2`,
      [schema, tablespace],
    );
    expect(tables.rows[0]!.n).toBeGreaterThan(0); // the jobs really live on the small disk

    const job = jobMaker(T0);
    // Random payloads: compression cannot shrink them below what the disk holds.
    const big = (i: number) =>
      job(T0 + 3_600_000 + i, { payload: { i, blob: randomBytes(96 * 1024).toString("base64") } });
    await store.jobsInsert({ jobs: [big(0)], now: T0 });
    expect(disk.fill()).toBeGreaterThan(0);

    let refused: unknown = null;
    let stored = 1;
    for (let i = 1; i <= 100 && refused === null; i++) {
      const batch = [big(2 * i), big(2 * i + 1)];
      try {
        await store.jobsInsert({ jobs: batch, now: T0 });
        stored += 2;
      } catch (err) {
        refused = err;
      }
    }
    expect(refused).toBeInstanceOf(StorageFullError);
    expect(storageFullIn(refused)).toBe(refused);
    expect((refused as StorageFullError).message).toMatch(
      /^storage is full: inserting jobs failed/,
    );
    expect(((refused as Error).cause as { code?: string }).code).toBe("53100");
    // all or nothing: only the batches that were answered are stored
    expect((await store.jobsCountByStatus({})).pending).toBe(stored);

    // the probe (run on a backoff while storage is full) needs new blocks: refused too
    const probe = await store.storageProbe({ now: T0 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(probe).toBeInstanceOf(StorageFullError);
    expect((probe as StorageFullError).message).toMatch(/^storage is full: probing storage/);

    disk.free();
    // before: nothing but the next job write could tell that space was back
    await expect(store.storageProbe({ now: T0 })).resolves.toBeUndefined();
    await store.jobsInsert({ jobs: [big(10_000)], now: T0 });
    expect((await store.jobsCountByStatus({})).pending).toBe(stored + 1);
  }, 60_000);
});
