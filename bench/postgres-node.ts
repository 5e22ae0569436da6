/**
 * One scheduler node process for the PostgreSQL dispatch benchmark, started as a user
 * starts one: `createScheduler({ db })` with every default (claim batch, concurrency, shard
 * leases and partition maintenance from the store), a no-op handler. Talks to the
 * benchmark over IPC, so finding out how far it got costs the database nothing:
 *
 * - sends `{ ready: true }` once the store is open;
 * - on `"start"` starts the scheduler and answers `{ started: true }`;
 * - on `"report"` answers `{ succeeded, cpuMs }` (jobs it has fired, and this process's CPU
 *   time, user + system, since "start");
 * - on SIGTERM stops and exits 0.
 *
 * argv: url schema nodeName
 */
import { createScheduler } from "../src/create-scheduler.js";

const [url, schema, nodeName] = process.argv.slice(2) as [string, string, string];
const scheduler = await createScheduler({ db: `${url}?schema=${schema}`, nodeName });
let succeeded = 0;
scheduler.on("succeeded", () => {
  succeeded++;
});
scheduler.handle("noop", () => undefined);
let cpuAtStart = process.cpuUsage();
const send = (m: unknown): void => {
  process.send?.(m);
};
process.on("message", (m) => {
  if (m === "start") {
    cpuAtStart = process.cpuUsage();
    scheduler.start();
    send({ started: true });
  } else if (m === "report") {
    const cpu = process.cpuUsage(cpuAtStart);
    send({ succeeded, cpuMs: (cpu.user + cpu.system) / 1000 });
  }
});
send({ ready: true });
process.once("SIGTERM", () => {
  void (async () => {
    await scheduler.close();
    process.exit(0);
  })();
});
