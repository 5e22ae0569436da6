import type Database from "better-sqlite3";
import { Scheduler } from "../src/api/scheduler.js";
import { bucketOf } from "../src/core/buckets.js";
import { createIdGenerator } from "../src/core/ids.js";
import type { ScheduleInput } from "../src/core/schedule-input.js";
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
 * what the API, validation, counters and staging checks cost on top. The two are
 * interleaved chunk by chunk, so load from other processes on the machine hits both alike.
 */
const BATCH = 10_000;
const ONE_CHUNK = 1000;

export async function scheduleThroughput(sizes: Sizes): Promise<BenchResult> {
  const { path, info } = await backlogFile(sizes.backlog);
  const random = seededRandom(42);
  const inputs = (n: number): ScheduleInput[] =>
    Array.from({ length: n }, (_, i) => ({
      dueAt: info.dueFrom + Math.floor(random() * BACKLOG_SPAN_MS),
      target: "noop",
      payload: { n: i },
    }));

  const base = scratchCopy(path, "schedule-baseline");
  const copy = scratchCopy(path, "schedule");
  const baseStore = new SqliteStore({ path: base.path });
  const store = new SqliteStore({ path: copy.path });
  const scheduler = new Scheduler({ store });
  const raw = new RawInsert(baseStore);
  const time = { bulk: 0, baseBulk: 0, one: 0, baseOne: 0 };
  try {
    // Each chunk's jobs are built just before it is timed (outside the timings): holding all
    // of them for the whole run would make every garbage collection of the timed calls
    // walk a heap of a million objects that belong to the benchmark, not to duetime.
    const p = new Progress("scheduleMany and raw insert, interleaved", sizes.scheduleBulk);
    for (let i = 0; i < sizes.scheduleBulk; i += BATCH) {
      const chunk = inputs(Math.min(BATCH, sizes.scheduleBulk - i));
      const rows = raw.rows(chunk);
      let t = performance.now();
      raw.batch(rows);
      time.baseBulk += performance.now() - t;
      t = performance.now();
      await scheduler.scheduleMany(chunk);
      time.bulk += performance.now() - t;
      p.update(i + chunk.length);
    }
    p.done();
    const q = new Progress("schedule and raw insert, one at a time", sizes.scheduleOne);
    for (let i = 0; i < sizes.scheduleOne; i += ONE_CHUNK) {
      const chunk = inputs(Math.min(ONE_CHUNK, sizes.scheduleOne - i));
      const rows = raw.rows(chunk);
      let t = performance.now();
      for (const r of rows) raw.one(r);
      time.baseOne += performance.now() - t;
      t = performance.now();
      for (const input of chunk) await scheduler.schedule(input);
      time.one += performance.now() - t;
      q.update(i + chunk.length);
    }
    q.done();
    const counts = await store.jobsCountByStatus({});
    const expected = sizes.backlog + sizes.scheduleBulk + sizes.scheduleOne;
    if (counts.pending !== expected) {
      throw new Error(`schedule-throughput: ${counts.pending} pending, expected ${expected}`);
    }
  } finally {
    await scheduler.close();
    await baseStore.close();
    copy.remove();
    base.remove();
  }
  const perSec = (n: number, ms: number): number => n / (ms / 1000);
  const bulk = perSec(sizes.scheduleBulk, time.bulk);
  const baseBulk = perSec(sizes.scheduleBulk, time.baseBulk);
  const one = perSec(sizes.scheduleOne, time.one);
  const baseOne = perSec(sizes.scheduleOne, time.baseOne);

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
      "baseline: a plain INSERT of the same columns through better-sqlite3, pre-built rows, same table and indexes, another copy of the same backlog (bulk: 10k rows per transaction; one: a transaction per row), interleaved with the measured calls",
      "due times uniformly random over the backlog's 30 days (hour buckets); WAL, synchronous=NORMAL",
    ],
  };
}

/** Plain better-sqlite3 inserts of the same jobs, rows built before timing. */
class RawInsert {
  private readonly db: Database.Database;
  private readonly stmt: Database.Statement;
  private readonly many: (rows: readonly RawRow[]) => void;
  private readonly newId = createIdGenerator();

  constructor(private readonly store: SqliteStore) {
    this.db = store.connection;
    this.stmt = this.db.prepare(RAW_INSERT);
    this.many = this.db.transaction((rows: readonly RawRow[]) => {
      for (const r of rows) this.stmt.run(...r);
    });
  }

  rows(inputs: readonly ScheduleInput[]): RawRow[] {
    const now = Date.now();
    return inputs.map((j) => {
      const dueAt = j.dueAt as number;
      const row: RawRow = [
        this.newId(),
        "default",
        null,
        dueAt,
        bucketOf(dueAt, this.store.bucketWidthMs),
        0,
        JSON.stringify(j.payload),
        j.target,
        null,
        3,
        null,
        now,
        now,
      ];
      return row;
    });
  }

  batch(rows: readonly RawRow[]): void {
    this.many(rows);
  }

  one(row: RawRow): void {
    this.stmt.run(...row);
  }
}

/** id, tenant, key, due_at, bucket, shard, payload, target, target_options, max_attempts, expire_after_ms, created_at, updated_at */
type RawRow = [
  string,
  string,
  null,
  number,
  number,
  number,
  string,
  string,
  null,
  number,
  null,
  number,
  number,
];

/** A plain insert of a pending row into the store's jobs table (positional binding). */
const RAW_INSERT = `INSERT INTO jobs (id, tenant, key, due_at, bucket, shard, payload,
    target, target_options, max_attempts, expire_after_ms, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
