/**
 * A scheduler node as a user starts one on PostgreSQL (Scheduler defaults: its own shard
 * leases, liveness lock and partition maintenance from the store), for the dead-node test.
 * Its handler never returns: every job it starts stays claimed by it (its lease renewed)
 * until the process dies. Writes "started <job id>" to stdout for each.
 *
 * argv: url schema nodeId
 */
import { Scheduler } from "../../src/api/scheduler.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";

const [url, schema, nodeId] = process.argv.slice(2) as [string, string, string];
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const store = await PostgresStore.open({ url, schema, onError: () => undefined });
const scheduler = new Scheduler({ store, nodeId, logger: quiet, handlerTimeoutMs: 600_000 });
scheduler.handle("hold", (job) => {
  process.stdout.write(`started ${job.id}\n`);
  return new Promise<void>(() => undefined);
});
scheduler.start();
process.stdout.write("ready\n");
