import { describe, expect, it } from "vitest";
import { once } from "node:events";
import { Scheduler } from "../../src/api/scheduler.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { silentLogger } from "../support/harness.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const server = usePostgresServer();

describe("a Scheduler on PostgreSQL", () => {
  it("starts the store's node services (shard leases) by itself and fires through them", async () => {
    const store = await PostgresStore.open({
      url: server.url,
      schema: freshSchema("node"),
      shardCount: 8,
      poolSize: 4,
    });
    const scheduler = new Scheduler({ store, logger: silentLogger, nodeId: "node-under-test" });
    try {
      scheduler.handle("t", () => "done");
      // already due: nothing waits for a due time
      const made = await scheduler.scheduleMany(
        Array.from({ length: 20 }, (_, i) => ({ dueAt: Date.now() - 1000 + i, target: "t" })),
      );
      let fired = 0;
      const all = new Promise<void>((resolve) =>
        scheduler.on("succeeded", () => {
          if (++fired === made.length) resolve();
        }),
      );
      scheduler.start();
      await all;
      const leases = await store.connection.query(
        `SELECT count(*)::int AS n FROM "${store.schema}".shard_leases WHERE owner = $1`,
        ["node-under-test"],
      );
      expect(leases.rows[0].n).toBe(8);
      expect((await scheduler.stats()).counts).toMatchObject({ pending: 0, succeeded: 20 });
      await scheduler.stop();
      // a clean stop hands the shards back at once
      const after = await store.connection.query(
        `SELECT count(*)::int AS n FROM "${store.schema}".shard_leases WHERE owner = $1`,
        ["node-under-test"],
      );
      expect(after.rows[0].n).toBe(0);
    } finally {
      await scheduler.close();
    }
  });

  it("wakes on a job scheduled by another node (LISTEN/NOTIFY)", async () => {
    const schema = freshSchema("notify");
    const a = await PostgresStore.open({ url: server.url, schema, poolSize: 2 });
    const b = await PostgresStore.open({ url: server.url, schema, poolSize: 2 });
    // a sleeps up to a minute between polls: only the notification can wake it in time
    const firing = new Scheduler({ store: a, logger: silentLogger, maxIdleMs: 60_000 });
    const writer = new Scheduler({ store: b, logger: silentLogger });
    try {
      firing.handle("t", () => undefined);
      firing.start();
      await new Promise((r) => setTimeout(r, 300)); // let it settle into its long sleep
      const started = Date.now();
      await writer.schedule({ dueAt: Date.now(), target: "t" });
      await once(firing, "succeeded");
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await firing.close();
      await writer.close();
    }
  });
});
