import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const server = usePostgresServer();

describe("postgres migrations and settings", () => {
  it("migrates once when several nodes open a new schema at the same moment", async () => {
    const schema = freshSchema("mig");
    const stores = await Promise.all(
      Array.from({ length: 6 }, () => PostgresStore.open({ url: server.url, schema, poolSize: 2 })),
    );
    const versions = await stores[0]!.connection.query<{ version: number }>(
      `SELECT version FROM "${schema}".migrations ORDER BY version`,
    );
    expect(versions.rows.map((r) => r.version)).toEqual([1, 2, 3]);
    await stores[0]!.migrate(); // idempotent
    expect(stores.every((s) => s.bucketWidthMs === 86_400_000 && s.shardCount === 64)).toBe(true);
    await Promise.all(stores.map((s) => s.close()));
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
