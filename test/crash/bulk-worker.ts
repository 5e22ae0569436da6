/**
 * A process running one bulk operation for the bulk crash test: argv = SQLite file. It runs
 * the file's one unfinished operation (queued or running) batch by batch in this call
 * (Scheduler.runOperation, as the CLI does on a local file), printing each batch's progress
 * as a JSON line, and the final record last. The test SIGKILLs it partway; started again on
 * the same file it resumes the operation from its stored cursor.
 */
import pino from "pino";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";

const [dbPath, startText] = process.argv.slice(2);
const scheduler = new Scheduler({
  store: new SqliteStore({ path: dbPath! }),
  clock: new ManualClock(Number(startText)),
  logger: pino({ level: "silent" }),
  operationBatchSize: 50,
});
const active = [
  ...(await scheduler.listOperations({ state: "queued" })).operations,
  ...(await scheduler.listOperations({ state: "running" })).operations,
];
if (active.length !== 1)
  throw new Error(`expected one unfinished operation, found ${active.length}`);
const print = (op: { scanned: number; changed: number; skipped: number; state: string }) =>
  process.stdout.write(`${JSON.stringify(op)}\n`);
// 10 ms after each batch, so the batches left outlast the test's reaction to a line (the kill
// lands in this wait or in a later batch's transaction, as the machine's load has it)
const pause = new Int32Array(new SharedArrayBuffer(4));
const progress = (op: Parameters<typeof print>[0]) => {
  print(op);
  Atomics.wait(pause, 0, 0, 10);
};
print(await scheduler.runOperation(active[0]!.id, progress));
await scheduler.close();
