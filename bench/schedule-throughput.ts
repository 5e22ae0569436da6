import type Database from "better-sqlite3";
import { Scheduler } from "../src/api/scheduler.js";
import { bucketOf } from "../src/core/buckets.js";
import { createIdGenerator } from "../src/core/ids.js";
import type { ScheduleInput } from "../src/core/schedule-input.js";
import { SQL } from "../src/stores/sqlite/statements.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { BACKLOG_SPAN_MS, backlogFile, scratchCopy } from "./lib/data.js";
import { Progress } from "./lib/progress.js";
import { seededRandom } from "./lib/random.js";
import { rate, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";

/**
 * Schedule throughput on top of the shared pending backlog: the bulk path
 * (scheduler.scheduleMany, 10k jobs per call = one transaction) and one job at a time
 * (scheduler.schedule, one transaction each), with due times spread over the same 30 days
 * as the backlog. The scheduler is not started (nothing is due; this measures writes).
 * Baseline: the store's own INSERT statement run by plain better-sqlite3 with pre-built
 * rows, into the same table with the same indexes on another copy of the same backlog:
 * what the API, validation, counters and staging checks cost on top.
 */
const BATCH = 10_000;

export async function scheduleThroughput(sizes: Sizes): Promise<BenchResult> {
  const { path, info } = await backlogFile(sizes.backlog);
  const random = seededRandom(42);
  const inputs = (n: number): ScheduleInput[] =>
    Array.from({ length: n }, (_, i) => ({
      dueAt: info.dueFrom + Math.floor(random() * BACKLOG_SPAN_MS),
      target: "noop",
      payload: { n: i },
    }));
  const bulkInputs = inputs(sizes.scheduleBulk);
  const oneInputs = inputs(sizes.scheduleOne);

  // Baseline first, on its own copy.
  const base = scratchCopy(path, "schedule-baseline");
  let baseBulk: number;
  let baseOne: number;
  try {
    const store = new SqliteStore({ path: base.path });
    try {
      baseBulk = rawInsert(store, bulkInputs, true);
      baseOne = rawInsert(store, oneInputs, false);
    } finally {
      await store.close();
    }
  } finally {
    base.remove();
  }

  const copy = scratchCopy(path, "schedule");
  let bulk: number;
  let one: number;
  try {
    const store = new SqliteStore({ path: copy.path });
    const scheduler = new Scheduler({ store });
    try {
      const p = new Progress("scheduleMany", bulkInputs.length);
      let t = performance.now();
      for (let i = 0; i < bulkInputs.length; i += BATCH) {
        await scheduler.scheduleMany(bulkInputs.slice(i, i + BATCH));
        p.update(i + BATCH);
      }
      bulk = bulkInputs.length / ((performance.now() - t) / 1000);
      p.done(rate(bulk));
      const q = new Progress("schedule (one at a time)", oneInputs.length);
      t = performance.now();
      for (let i = 0; i < oneInputs.length; i++) {
        await scheduler.schedule(oneInputs[i]!);
        if (i % 1000 === 999) q.update(i + 1);
      }
      one = oneInputs.length / ((performance.now() - t) / 1000);
      q.done(rate(one));
      const counts = await store.jobsCountByStatus({});
      const expected = sizes.backlog + bulkInputs.length + oneInputs.length;
      if (counts.pending !== expected) {
        throw new Error(`schedule-throughput: ${counts.pending} pending, expected ${expected}`);
      }
    } finally {
      await scheduler.close();
    }
  } finally {
    copy.remove();
  }

  return {
    name: "schedule-throughput",
    title: `Schedule throughput with a ${count(sizes.backlog)} pending backlog`,
    goals: [
      {
        metric: `bulk: scheduleMany, ${count(BATCH)} per transaction (${count(sizes.scheduleBulk)} jobs)`,
        value: rate(bulk),
        goal: ">= 100,000/s",
        baseline: rate(baseBulk),
        ratio: ratio(bulk, baseBulk),
        pass: bulk >= 100_000,
      },
      {
        metric: `one at a time: schedule (${count(sizes.scheduleOne)} jobs)`,
        value: rate(one),
        goal: ">= 10,000/s",
        baseline: rate(baseOne),
        ratio: ratio(one, baseOne),
        pass: one >= 10_000,
      },
    ],
    details: [],
    notes: [
      "baseline: the store's INSERT statement through plain better-sqlite3, pre-built rows, same table and indexes, same backlog (bulk: 10k rows per transaction; one: a transaction per row)",
      "due times uniformly random over the backlog's 30 days (hour buckets); WAL, synchronous=NORMAL",
    ],
  };
}

/** Plain better-sqlite3 inserts of the same jobs; returns rows/s. */
function rawInsert(store: SqliteStore, inputs: readonly ScheduleInput[], batched: boolean): number {
  const db: Database.Database = store.connection;
  const stmt = db.prepare(SQL.jobInsert);
  const newId = createIdGenerator();
  const now = Date.now();
  const rows = inputs.map((j) => {
    const dueAt = j.dueAt as number;
    return {
      id: newId(),
      tenant: "default",
      key: null,
      dueAt,
      bucket: bucketOf(dueAt, store.bucketWidthMs),
      shard: 0,
      payload: JSON.stringify(j.payload),
      target: j.target,
      targetOptions: null,
      maxAttempts: 3,
      expireAfterMs: null,
      now,
    };
  });
  const label = batched
    ? "baseline: raw insert, 10k per transaction"
    : "baseline: raw insert, one per transaction";
  const p = new Progress(label, rows.length);
  const insertMany = db.transaction((batch: typeof rows) => {
    for (const r of batch) stmt.run(r);
  });
  const t = performance.now();
  if (batched) {
    for (let i = 0; i < rows.length; i += BATCH) {
      insertMany(rows.slice(i, i + BATCH));
      p.update(i + BATCH);
    }
  } else {
    for (let i = 0; i < rows.length; i++) {
      stmt.run(rows[i]);
      if (i % 1000 === 999) p.update(i + 1);
    }
  }
  const r = rows.length / ((performance.now() - t) / 1000);
  p.done(rate(r));
  return r;
}
