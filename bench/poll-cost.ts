import type Database from "better-sqlite3";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { backlogFile, scratchCopy } from "./lib/data.js";
import { insertJobs, newJobs } from "./lib/jobs.js";
import { note } from "./lib/progress.js";
import { fmt, ratio, type BenchResult, type GoalRow } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";
import { median, timeRepeated } from "./lib/stats.js";

/**
 * The core claim: the cost of one poll for the same small due set on top of growing
 * pending backlogs, through three access paths on the same real store file:
 *  (a) a full scan (the jobs table read with NOT INDEXED),
 *  (b) a B-tree on due_at over the jobs (all pending here; created for this benchmark),
 *  (c) the store's own path: bucket index + hot (due_at, seq) table of staged buckets,
 *      read alone (the poll's range read) and as the whole claim (jobsClaimDue, rolled
 *      back after each poll so every poll sees the same due set).
 * The poll instant sits 30 s before the backlog's first bucket, which is staged as the
 * watcher would stage it (stageAheadMs 60 s), so the hot table holds a bucket's share of
 * the backlog beside the due set: it grows with the backlog, the due prefix does not.
 * Rows examined are counted by a SQL function placed first in the WHERE clause, called for
 * each row the plan visited. The indexed paths are timed in rounds that visit every backlog
 * size in turn (the median round is reported), so load from other processes on the machine
 * falls on all sizes alike instead of on whichever ran last.
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

interface Prepared {
  backlog: number;
  hotRows: number;
  scan: PathCost;
  dueIndex: PathCost;
  hotRead: PathCost;
  claim: PathCost;
  /** One poll of each path; claim returns the ms its call took (the rollback is not timed). */
  poll: { dueIndex: () => void; hotRead: () => void; claim: () => Promise<number> };
  floor: () => void;
  close: () => Promise<void>;
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
  const prepared: Prepared[] = [];
  let results: SizeCost[];
  try {
    for (const n of sizes.pollBacklogs) prepared.push(await prepareSize(n, sizes.pollDue));
    results = await measureInRounds(prepared, sizes.scale === "tiny" ? 5 : 15);
  } finally {
    for (const p of prepared) await p.close();
  }
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
      "jobsClaimDue is the whole claim (read, delete from hot, pending check and lease rows for 100 jobs, counters), rolled back after each poll",
      "(b), (c) and the floor: median of timing rounds that alternate between the backlog sizes; (a): mean of at least 3 polls",
    ],
  };
}

/** Times the indexed paths round-robin over the sizes; each figure is the median round. */
async function measureInRounds(prepared: readonly Prepared[], rounds: number): Promise<SizeCost[]> {
  const samples = prepared.map(() => ({
    dueIndex: [] as number[],
    hotRead: [] as number[],
    claim: [] as number[],
    floor: [] as number[],
  }));
  const slice = { budgetMs: 40, min: 5, max: 5000 };
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < prepared.length; k++) {
      const i = (k + r) % prepared.length;
      const p = prepared[i]!;
      const s = samples[i]!;
      const d = timeRepeated(p.poll.dueIndex, slice);
      s.dueIndex.push(d.msEach);
      p.dueIndex.polls += d.runs;
      const h = timeRepeated(p.poll.hotRead, slice);
      s.hotRead.push(h.msEach);
      p.hotRead.polls += h.runs;
      s.floor.push(timeRepeated(p.floor, slice).msEach);
      let ms = 0;
      let polls = 0;
      const started = performance.now();
      while (polls < 5 || performance.now() - started < slice.budgetMs) {
        ms += await p.poll.claim();
        polls++;
      }
      s.claim.push(ms / polls);
      p.claim.polls += polls;
    }
    note(`poll-cost: timing round ${r + 1}/${rounds}`);
  }
  return prepared.map((p, i) => {
    const s = samples[i]!;
    return {
      backlog: p.backlog,
      hotRows: p.hotRows,
      scan: p.scan,
      dueIndex: { ...p.dueIndex, ms: median(s.dueIndex) },
      hotRead: { ...p.hotRead, ms: median(s.hotRead) },
      claim: { ...p.claim, ms: median(s.claim) },
      floorMs: median(s.floor),
    };
  });
}

/**
 * A scratch copy of the backlog with the due set written and staged and the due_at index
 * built; counts rows examined and times the full scan (too slow for rounds at 10M).
 */
async function prepareSize(n: number, dueCount: number): Promise<Prepared> {
  const { path, info } = await backlogFile(n);
  const scratch = scratchCopy(path, `poll-${n}`);
  const store = new SqliteStore({ path: scratch.path });
  const close = async (): Promise<void> => {
    await store.close();
    scratch.remove();
  };
  try {
    const db = store.connection;
    const now = info.dueFrom - 30_000;
    await insertJobs(
      store,
      newJobs(store, dueCount, (i) => now - 1 - i * 100),
    );
    await store.bucketsStage({ until: now + 60_000, maxRows: Number.MAX_SAFE_INTEGER });
    const hotRows = db.prepare(`SELECT count(*) FROM hot`).pluck().get() as number;
    note(`poll-cost ${count(n)}: creating the due_at index for path (b)`);
    db.exec(`CREATE INDEX bench_pending_due ON jobs (due_at)`);

    let visited = 0;
    db.function("bench_visit", { deterministic: false }, () => {
      visited++;
      return 1;
    });
    const until = now + HORIZON_MS;
    const path = (sql: string): { cost: PathCost; poll: () => void } => {
      const stmt = db.prepare(sql);
      const counted = db.prepare(sql.replace("WHERE", "WHERE bench_visit() AND"));
      const found = stmt.all(until, LIMIT).length;
      if (found !== dueCount) throw new Error(`poll-cost: found ${found}, not ${dueCount}`);
      visited = 0;
      counted.all(until, LIMIT);
      const cost = { ms: NaN, polls: 0, rows: visited, found, plan: plan(db, sql) };
      return { cost, poll: () => stmt.all(until, LIMIT) };
    };
    const scan = path(
      `SELECT seq, due_at FROM jobs NOT INDEXED WHERE due_at <= ? ORDER BY due_at LIMIT ?`,
    );
    const t = timeRepeated(scan.poll, { budgetMs: 1500, min: 3, max: 20_000 });
    scan.cost.ms = t.msEach;
    scan.cost.polls = t.runs;
    note(`poll-cost ${count(n)}: full scan ${fmt(t.msEach, 3)} ms/poll, ${scan.cost.rows} rows`);
    const dueIndex = path(
      `SELECT seq, due_at FROM jobs INDEXED BY bench_pending_due
        WHERE due_at <= ? ORDER BY due_at LIMIT ?`,
    );
    const hotSql = `SELECT due_at, seq FROM hot WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`;
    const hotRead = path(hotSql);
    const params = { now, dueBefore: until, limit: LIMIT, leaseMs: 60_000, owner: "bench" };
    const claimOnce = async (): Promise<number> => {
      db.exec("BEGIN IMMEDIATE");
      try {
        const started = performance.now();
        const jobs = await store.jobsClaimDue(params);
        const ms = performance.now() - started;
        if (jobs.length !== dueCount) throw new Error(`poll-cost: claimed ${jobs.length}`);
        return ms;
      } finally {
        db.exec("ROLLBACK");
      }
    };
    await claimOnce();
    const claim: PathCost = {
      ms: NaN,
      polls: 0,
      rows: hotRead.cost.rows + dueCount,
      found: dueCount,
      plan: plan(db, hotSql),
    };
    const seqs = db
      .prepare(`SELECT seq FROM hot WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`)
      .pluck()
      .all(until, LIMIT) as number[];
    const floorStmt = db.prepare(
      `SELECT seq, due_at FROM jobs WHERE seq IN (SELECT value FROM json_each(?))`,
    );
    const seqJson = JSON.stringify(seqs);
    return {
      backlog: n,
      hotRows,
      scan: scan.cost,
      dueIndex: dueIndex.cost,
      hotRead: hotRead.cost,
      claim,
      poll: { dueIndex: dueIndex.poll, hotRead: hotRead.poll, claim: claimOnce },
      floor: () => floorStmt.all(seqJson),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function plan(db: Database.Database, sql: string): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(0, 0) as { detail: string }[];
  return rows.map((r) => r.detail).join("; ");
}
