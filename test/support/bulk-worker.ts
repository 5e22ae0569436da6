/**
 * Runs a database's one unfinished bulk operation (queued or running) batch by batch in one
 * call (Scheduler.runOperation, as the CLI does on a local file), for the bulk crash tests
 * (bulk-crash.ts). `db` is a SQLite file or a postgres:// URL with ?schema=, as
 * createScheduler takes it. Run as a script (argv = db), it is the process the test
 * SIGKILLs partway: it prints each batch's progress as a JSON line and the final record last.
 * Called again on the same database, the operation resumes from its stored cursor.
 */
import { fileURLToPath } from "node:url";
import pino from "pino";
import { ManualClock } from "../../src/core/clock.js";
import type { Operation } from "../../src/core/operation.js";
import { createScheduler } from "../../src/create-scheduler.js";

/** The clock both processes run at (the jobs are due a day after it). */
export const BULK_T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

export async function runUnfinished(
  db: string,
  progress: (op: Operation) => void,
): Promise<Operation> {
  const scheduler = await createScheduler({
    db,
    clock: new ManualClock(BULK_T0),
    logger: pino({ level: "silent" }),
    operationBatchSize: 50,
  });
  try {
    const active = [
      ...(await scheduler.listOperations({ state: "queued" })).operations,
      ...(await scheduler.listOperations({ state: "running" })).operations,
    ];
    if (active.length !== 1)
      throw new Error(`expected one unfinished operation, found ${active.length}`);
    return await scheduler.runOperation(active[0]!.id, progress);
  } finally {
    await scheduler.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const print = (op: Operation) => process.stdout.write(`${JSON.stringify(op)}\n`);
  // 10 ms after each batch, so the batches left outlast the test's reaction to a line
  const pause = new Int32Array(new SharedArrayBuffer(4));
  print(
    await runUnfinished(process.argv[2]!, (op) => {
      print(op);
      Atomics.wait(pause, 0, 0, 10);
    }),
  );
}
