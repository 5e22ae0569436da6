/**
 * One scheduler node for the multi-process PostgreSQL tests: a Scheduler on a
 * PostgresStore, claiming only the shards its ShardLeases own. The handler appends
 * "<job id> <node> <fence>" to the log file given (synchronously, so the parent sees
 * every firing even if this process is killed). Counts of logged errors go to stdout
 * as "errors N" on exit; SIGTERM stops it cleanly (exit 0).
 *
 * argv: url schema nodeId logPath
 */
import { appendFileSync } from "node:fs";
import { Scheduler } from "../../src/api/scheduler.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { ShardLeases } from "../../src/stores/postgres/shard-leases.js";

const [url, schema, nodeId, logPath] = process.argv.slice(2) as [string, string, string, string];
let errors = 0;
const count = () => {
  errors++;
};
const logger = { debug() {}, info() {}, warn: count, error: count };
process.on("unhandledRejection", (err) => {
  process.stdout.write(`unhandled ${String(err)}\n`);
  process.exit(3);
});

const store = await PostgresStore.open({ url, schema, poolSize: 6, onError: count });
const leases = new ShardLeases(store.context, { nodeId, heartbeatMs: 500, ttlMs: 1500, logger });
const scheduler = new Scheduler({
  store,
  nodeId,
  logger,
  concurrency: 100,
  claimBatchSize: 200,
  leaseMs: 3000,
  handlerTimeoutMs: 1000,
  leaseSweepIntervalMs: 500,
  maxIdleMs: 500,
  shards: () => leases.owned(),
});
scheduler.handle("record", async (job) => {
  appendFileSync(logPath, `${job.id} ${nodeId} ${job.fence}\n`);
});
await leases.start();
scheduler.start();
process.stdout.write("started\n");

process.once("SIGTERM", () => {
  void (async () => {
    await scheduler.stop();
    await leases.stop().catch(count);
    await store.close();
    process.stdout.write(`errors ${errors}\nstopped\n`);
    process.exit(0);
  })();
});
