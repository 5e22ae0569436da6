/**
 * A scheduler process for the crash test: fires every due job of the SQLite file given as
 * argv[2] with a handler that appends the job id to argv[3] (so the parent sees each
 * firing even if this process is killed), and exits once nothing is pending or claimed.
 * argv[4], if given, is the node name (the default is the same for every worker of a file).
 */
import { appendFileSync } from "node:fs";
import pino from "pino";
import { Scheduler } from "../../src/api/scheduler.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";

const [dbPath, logPath, nodeName] = process.argv.slice(2);
const store = new SqliteStore({ path: dbPath! });
const scheduler = new Scheduler({
  store,
  logger: pino({ level: "silent" }),
  concurrency: 50,
  claimBatchSize: 100,
  leaseMs: 60_000,
  ...(nodeName ? { nodeName } : {}),
});
scheduler.handle("record", async (job) => {
  appendFileSync(logPath!, `${job.id}\n`);
  await new Promise((r) => setTimeout(r, 2));
});
scheduler.start();
process.stdout.write("started\n");
const timer = setInterval(() => {
  void scheduler.stats().then(async (s) => {
    if (s.counts.pending + s.counts.claimed === 0) {
      clearInterval(timer);
      await scheduler.close();
      process.stdout.write("drained\n");
    }
  });
}, 50);
