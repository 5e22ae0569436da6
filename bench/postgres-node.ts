/**
 * One scheduler node process for the PostgreSQL dispatch benchmark: a Scheduler on a
 * PostgresStore with shard leases, a no-op handler, default claim batch and concurrency.
 * Prints "started" once its first heartbeat is done; SIGTERM stops it (exit 0).
 *
 * argv: url schema nodeId
 */
import { Scheduler } from "../src/api/scheduler.js";
import { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import { ShardLeases } from "../src/stores/postgres/shard-leases.js";

const [url, schema, nodeId] = process.argv.slice(2) as [string, string, string];
const store = await PostgresStore.open({ url, schema, poolSize: 8 });
const leases = new ShardLeases(store.context, { nodeId, heartbeatMs: 500, ttlMs: 1500 });
const scheduler = new Scheduler({
  store,
  nodeId,
  maxIdleMs: 30_000,
  shards: () => leases.owned(),
});
scheduler.handle("noop", () => undefined);
await leases.start();
scheduler.start();
process.stdout.write("started\n");
process.once("SIGTERM", () => {
  void (async () => {
    await scheduler.stop();
    await leases.stop();
    await store.close();
    process.exit(0);
  })();
});
