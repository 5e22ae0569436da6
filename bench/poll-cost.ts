import type Database from "better-sqlite3";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { backlogFile, scratchCopy } from "./lib/data.js";
import { insertJobs, newJobs } from "./lib/jobs.js";
import { note } from "./lib/progress.js";
import { fmt, ratio, type BenchResult, type GoalRow } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";
import { timeRepeated } from "./lib/stats.js";

/**
 * The core claim: the cost of one poll for the same small due set on top of growing
 * pending backlogs, through three access paths on the same real store file:
 *  (a) a full scan (the jobs table read with NOT INDEXED),
 *  (b) a partial B-tree on due_at over pending jobs (created for this benchmark),
 *  (c) the store's own path: bucket index + hot (due_at, seq) table of staged buckets,
 *      read alone (the poll's range read) and as the whole claim (jobsClaimDue, rolled
 *      back after each poll so every poll sees the same due set).
 * The poll instant sits 30 s before the backlog's first bucket, which is staged as the
 * watcher would stage it (stageAheadMs 60 s), so the hot table holds a bucket's share of
 * the backlog beside the due set: it grows with the backlog, the due prefix does not.
 * Rows examined are counted by a SQL function placed first in the WHERE clause, called for
 * each row the plan visits.
 */
const LIMIT = 500;
const HORIZON_MS = 1000;

interface PathCost {
  ms: number;
  polls: number;
  rows: number;
  found: number;
  plan: string;
}

interface SizeCost {
  backlog: number;
  hotRows: number;
  scan: PathCost;
  dueIndex: PathCost;
  hotRead: PathCost;
  claim: PathCost;
  floorMs: number;
}

export async function pollCost(sizes: Sizes): Promise<BenchResult> {
  const results: SizeCost[] = [];
  for (const n of sizes.pollBacklogs) results.push(await measureSize(n, sizes.pollDue));
  const small = results[0]!;
  const large = results[results.length - 1]!;
  const sizeRatio = `${count(large.backlog)} vs ${count(small.backlog)}`;
  const flat = (name: string, pick: (r: SizeCost) => PathCost): GoalRow => {
    const a = pick(large);
    const b = pick(small);
    return {
      metric: `${name}: ms/poll, ${sizeRatio}`,
      value: `${fmt(a.ms, 3)} ms`,
      goal: "<= 1.5x of smallest",
      baseline: `${fmt(b.ms, 3)} ms`,
      ratio: ratio(a.ms, b.ms),
      pass: a.ms / b.ms <= 1.5 && a.rows === b.rows,
    };
  };
  const goals: GoalRow[] = [
    {
      metric: `(a) full scan: ms/poll, ${sizeRatio}`,
      value: `${fmt(large.scan.ms, 3)} ms`,
      goal: "grows with backlog",
      baseline: `${fmt(small.scan.ms, 3)} ms`,
      ratio: ratio(large.scan.ms, small.scan.ms),
      pass: large.scan.rows / small.scan.rows >= (0.5 * large.backlog) / small.backlog,
    },
    flat("(b) due_at index", (r) => r.dueIndex),
    flat("(c) bucket + hot, range read", (r) => r.hotRead),
    flat("(c) bucket + hot, jobsClaimDue", (r) => r.claim),
  ];
  const rowsOf = (p: PathCost): string => `${fmt(p.ms, 3)} ms / ${p.rows.toLocaleString("en-US")}`;
  return {
    name: "poll-cost",
    title: `Poll cost: ${sizes.pollDue} due jobs on top of a pending backlog (claim batch ${LIMIT})`,
    goals,
    details: [
      {
        title: "ms per poll / rows examined, by backlog",
        headers: [
          "backlog",
          "(a) full scan",
          "(b) due_at index",
          "(c) hot range read",
          "(c) jobsClaimDue",
          "hot rows",
          "floor: due rows by rowid",
        ],
        rows: results.map((r) => [
          count(r.backlog),
          rowsOf(r.scan),
          rowsOf(r.dueIndex),
          rowsOf(r.hotRead),
          rowsOf(r.claim),
          r.hotRows.toLocaleString("en-US"),
          `${fmt(r.floorMs, 3)} ms`,
        ]),
      },
      {
        title: "Query plans (EXPLAIN QUERY PLAN, largest backlog)",
        headers: ["path", "plan", "polls timed"],
        rows: [
          ["(a) full scan", large.scan.plan, large.scan.polls],
          ["(b) due_at index", large.dueIndex.plan, large.dueIndex.polls],
          ["(c) hot range read", large.hotRead.plan, large.hotRead.polls],
          ["(c) jobsClaimDue", large.claim.plan, large.claim.polls],
        ],
      },
    ],
    notes: [
      "rows examined: (a)/(b) rows the plan visited; (c) hot entries read plus jobs rows claimed",
      "jobsClaimDue is the whole claim (read, delete from hot, conditional update of 100 rows, counters), rolled back after each poll",
    ],
  };
}

async function measureSize(n: number, dueCount: number): Promise<SizeCost> {
  const { path, info } = await backlogFile(n);
  const scratch = scratchCopy(path, `poll-${n}`);
  const store = new SqliteStore({ path: scratch.path });
  try {
    const db = store.connection;
    const now = info.dueFrom - 30_000;
    await insertJobs(
      store,
      newJobs(store, dueCount, (i) => now - 1 - i * 100),
    );
    await store.bucketsStage({ until: now + 60_000, maxRows: Number.MAX_SAFE_INTEGER });
    const hotRows = db.prepare(`SELECT count(*) FROM hot`).pluck().get() as number;
    note(`poll-cost ${count(n)}: creating the partial due_at index for path (b)`);
    db.exec(`CREATE INDEX bench_pending_due ON jobs (due_at) WHERE status = 'pending'`);

    let visited = 0;
    db.function("bench_visit", { deterministic: false }, () => {
      visited++;
      return 1;
    });
    const until = now + HORIZON_MS;
    const read = (sql: string, name: string): PathCost => {
      const stmt = db.prepare(sql);
      const counted = db.prepare(sql.replace("WHERE", "WHERE bench_visit() AND"));
      const found = stmt.all(until, LIMIT).length;
      const t = timeRepeated(() => stmt.all(until, LIMIT), {
        budgetMs: 1500,
        min: 3,
        max: 20_000,
      });
      visited = 0;
      counted.all(until, LIMIT);
      note(`poll-cost ${count(n)}: ${name} ${fmt(t.msEach, 3)} ms/poll, ${visited} rows`);
      return { ms: t.msEach, polls: t.runs, rows: visited, found, plan: plan(db, sql) };
    };
    const scan = read(
      `SELECT seq, due_at FROM jobs NOT INDEXED WHERE status = 'pending' AND due_at <= ?
        ORDER BY due_at LIMIT ?`,
      "full scan",
    );
    const dueIndex = read(
      `SELECT seq, due_at FROM jobs INDEXED BY bench_pending_due
        WHERE status = 'pending' AND due_at <= ? ORDER BY due_at LIMIT ?`,
      "due_at index",
    );
    const hotRead = read(
      `SELECT due_at, seq FROM hot WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`,
      "hot range read",
    );
    for (const p of [scan, dueIndex, hotRead]) {
      if (p.found !== dueCount) throw new Error(`poll-cost: found ${p.found}, not ${dueCount}`);
    }
    const claim = await measureClaim(store, now, dueCount);
    claim.rows += hotRead.rows;
    claim.plan = plan(
      db,
      `SELECT due_at, seq FROM hot WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`,
    );
    const seqs = db
      .prepare(`SELECT seq FROM hot WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`)
      .pluck()
      .all(until, LIMIT) as number[];
    const floorStmt = db.prepare(
      `SELECT seq, due_at, status FROM jobs WHERE seq IN (SELECT value FROM json_each(?))`,
    );
    const seqJson = JSON.stringify(seqs);
    const floor = timeRepeated(() => floorStmt.all(seqJson), {
      budgetMs: 500,
      min: 3,
      max: 20_000,
    });
    return { backlog: n, hotRows, scan, dueIndex, hotRead, claim, floorMs: floor.msEach };
  } finally {
    await store.close();
    scratch.remove();
  }
}

/** jobsClaimDue, each poll inside a transaction rolled back afterwards; only the claim is timed. */
async function measureClaim(store: SqliteStore, now: number, dueCount: number): Promise<PathCost> {
  const db = store.connection;
  const params = {
    now,
    dueBefore: now + HORIZON_MS,
    limit: LIMIT,
    leaseMs: 60_000,
    owner: "bench",
  };
  let total = 0;
  let polls = 0;
  let claimed = 0;
  const started = performance.now();
  while (polls < 3 || (polls < 20_000 && performance.now() - started < 1500)) {
    db.exec("BEGIN IMMEDIATE");
    const t = performance.now();
    const jobs = await store.jobsClaimDue(params);
    total += performance.now() - t;
    db.exec("ROLLBACK");
    claimed = jobs.length;
    polls++;
  }
  if (claimed !== dueCount) throw new Error(`poll-cost: claimed ${claimed}, not ${dueCount}`);
  return { ms: total / polls, polls, rows: claimed, found: claimed, plan: "" };
}

function plan(db: Database.Database, sql: string): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(0, 0) as { detail: string }[];
  return rows.map((r) => r.detail).join("; ");
}
