import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrations } from "../../src/stores/postgres/migrations.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const server = usePostgresServer();
/** Every migration's version, 1 to the latest (from the list itself, so adding one needs no edit). */
const ALL_VERSIONS = migrations("x").map((_, i) => i + 1);

describe("postgres migrations and settings", () => {
  it("migrates once when several nodes open a new schema at the same moment", async () => {
    const schema = freshSchema("mig");
    const stores = await Promise.all(
      Array.from({ length: 6 }, () => PostgresStore.open({ url: server.url, schema, poolSize: 2 })),
    );
    const versions = await stores[0]!.connection.query<{ version: number }>(
      `SELECT version FROM "${schema}".migrations ORDER BY version`,
    );
    expect(versions.rows.map((r) => r.version)).toEqual(ALL_VERSIONS);
    // the heartbeat's tables: HOT room, autovacuum not woken by every renewal (version 8)
    const options = await stores[0]!.connection.query<{ relname: string; reloptions: string[] }>(
      `SELECT relname, reloptions FROM pg_class
       WHERE relnamespace = $1::regnamespace AND relname IN ('nodes', 'shard_leases')
       ORDER BY relname`,
      [schema],
    );
    expect(options.rows).toEqual(
      ["nodes", "shard_leases"].map((relname) => ({
        relname,
        reloptions: [
          "fillfactor=50",
          "autovacuum_vacuum_threshold=10000",
          "autovacuum_analyze_threshold=10000",
        ],
      })),
    );
    await stores[0]!.migrate(); // idempotent
    expect(stores.every((s) => s.bucketWidthMs === 86_400_000 && s.shardCount === 64)).toBe(true);
    await Promise.all(stores.map((s) => s.close()));
  });

  it("adds the trace context column to a schema of version 3 with its jobs in place", async () => {
    const schema = freshSchema("mig");
    const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`CREATE TABLE "${schema}".migrations (version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const [i, sql] of migrations(schema).slice(0, 3).entries()) {
        await client.query(sql);
        await client.query(`INSERT INTO "${schema}".migrations (version) VALUES ($1)`, [i + 1]);
      }
      await client.query(`INSERT INTO "${schema}".meta (name, value) VALUES
        ('bucket_width_ms', '3600000'), ('history_width_ms', '3600000'), ('shard_count', '1')`);
      await client.query(
        `INSERT INTO "${schema}".jobs_live (shard, id, tenant, due_at, bucket, payload, target,
          max_attempts, created_at, updated_at)
        VALUES (0, '01OLDJOB00000000000000000A', 'default', $1, $2, 'null', 't', 3, $2, $2)`,
        [T0 + 5, T0],
      );
    } finally {
      await client.end();
    }
    const store = await PostgresStore.open({ url: server.url, schema });
    try {
      const versions = await store.connection.query<{ version: number }>(
        `SELECT version FROM "${schema}".migrations ORDER BY version`,
      );
      expect(versions.rows.map((r) => r.version)).toEqual(ALL_VERSIONS);
      const claimed = await store.jobsClaimDue({
        now: T0 + 10,
        dueBefore: T0 + 10,
        limit: 10,
        leaseMs: 30_000,
        owner: "n",
      });
      expect(claimed).toMatchObject([
        { id: "01OLDJOB00000000000000000A", status: "claimed", traceContext: null },
      ]);
    } finally {
      await store.close();
    }
  });

  it("fixes bucket width and shard count at creation and refuses another value later", async () => {
    const schema = freshSchema("mig");
    const first = await PostgresStore.open({
      url: server.url,
      schema,
      bucketWidthMs: 3_600_000,
      shardCount: 8,
    });
    await first.close();
    await expect(
      PostgresStore.open({ url: server.url, schema, bucketWidthMs: 60_000 }),
    ).rejects.toThrow(/bucketWidthMs: expected 3600000/);
    await expect(PostgresStore.open({ url: server.url, schema, shardCount: 16 })).rejects.toThrow(
      /shardCount: expected 8/,
    );
    // without options, the stored values are adopted
    const again = await PostgresStore.open({ url: server.url, schema });
    expect([again.bucketWidthMs, again.shardCount, again.historyWidthMs]).toEqual([
      3_600_000, 8, 3_600_000,
    ]);
    await again.close();
  });

  it("opens from a URL, with ?schema=", async () => {
    const schema = freshSchema("url");
    const store = await openPostgresStore(`${server.url}?schema=${schema}`, {});
    expect(store.kind).toBe("postgres");
    expect((store as PostgresStore).schema).toBe(schema);
    await store.close();
  });

  it("validates options with what was expected and what came", async () => {
    await expect(PostgresStore.open({ url: "mysql://x" })).rejects.toThrow(/option url: expected/);
    await expect(PostgresStore.open({ url: server.url, schema: "Bad-Name" })).rejects.toThrow(
      /option schema/,
    );
  });
});
