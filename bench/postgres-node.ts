/**
 * One scheduler node process for the PostgreSQL dispatch benchmark, started as a user
 * starts one: `createScheduler({ db })` with every default (claim batch, concurrency, shard
 * leases and partition maintenance from the store), a no-op handler. Talks to the
 * benchmark over IPC, so finding out how far it got costs the database nothing:
 *
 * - sends `{ ready: true }` once the store is open;
 * - on `"start"` starts the scheduler and answers `{ started: true }`;
 * - on `"report"` answers `{ succeeded, cpuMs, connections, statements, transactions,
 *   byStatement }` (jobs it has fired, this process's CPU time, user + system, and what its
 *   clients made the server run, lib/pg-transactions.ts; byStatement: [text, count] pairs
 *   counted from the start of the process, the others since "start");
 * - on SIGTERM stops and exits 0.
 *
 * argv: url schema nodeName
 */
import { createScheduler } from "../src/create-scheduler.js";
import { countTransactions } from "./lib/pg-transactions.js";

const [url, schema, nodeName] = process.argv.slice(2) as [string, string, string];
const counter = countTransactions();
const scheduler = await createScheduler({ db: `${url}?schema=${schema}`, nodeName });
let succeeded = 0;
scheduler.on("succeeded", () => {
  succeeded++;
});
scheduler.handle("noop", () => undefined);
let cpuAtStart = process.cpuUsage();
let countAtStart = counter.read();
const send = (m: unknown): void => {
  process.send?.(m);
};
process.on("message", (m) => {
  if (m === "start") {
    cpuAtStart = process.cpuUsage();
    countAtStart = counter.read();
    scheduler.start();
    send({ started: true });
  } else if (m === "report") {
    const cpu = process.cpuUsage(cpuAtStart);
    const count = counter.read();
    send({
      succeeded,
      cpuMs: (cpu.user + cpu.system) / 1000,
      connections: count.connections - countAtStart.connections,
      statements: count.statements - countAtStart.statements,
      transactions: count.transactions - countAtStart.transactions,
      byStatement: [...counter.byStatement()],
    });
  }
});
send({ ready: true });
process.once("SIGTERM", () => {
  void (async () => {
    await scheduler.close();
    process.exit(0);
  })();
});
