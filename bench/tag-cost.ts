import type Database from "better-sqlite3";
import { Scheduler } from "../src/api/scheduler.js";
import { SQL } from "../src/stores/sqlite/statements.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { BACKLOG_SPAN_MS, backlogFile, scratchCopy } from "./lib/data.js";
import { note } from "./lib/progress.js";
import { fmt, ratio, type BenchResult, type GoalRow } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";
import { median } from "./lib/stats.js";

/**
 * Issue 13 §2-§3: what acting on one tag costs as the backlog grows. Each backlog is a
 * cached file of pending jobs that each carry a user tag (`user:` + a number, 100 jobs a
 * user: 100 to 100k users, so the tag index holds one entry per job). On a scratch copy of
 * each, a Scheduler (not started: nothing else runs) is called as a user calls it, in
 * rounds that visit every size in turn; each round schedules `tagJobs` jobs with a fresh
 * tag (`account:<round>`, due across the backlog's 30 days, through scheduleMany) and
 * times, for that tag:
 *  - countJobs({ tag }): the count over the tag index;
 *  - list({ tag, limit: 1000 }) page after page to the end;
 *  - the bulk cancel: startOperation({ kind: "cancel", filter: { tags: [tag] } }) and
 *    runOperation (its batches in this call, as the CLI on a local file runs them), checked
 *    to have cancelled every one of the tag's jobs and nothing else.
 * After each round the jobs it cancelled are purged (untimed), so every round meets the
 * backlog as it was loaded; before the rounds, one untimed round per backlog takes the costs
 * of a first call (statements prepared, code compiled), which otherwise fell on whichever
 * backlog came first. Each figure is the median round; the baseline is the smallest
 * backlog's, same run.
 *
 * Tiny runs 21 rounds: its calls take a few ms, and with 3 (as it had) the median of a
 * loaded machine's preemptions swung the ratios from 0.33x to 2.40x between back-to-back runs.
 */
const USER_JOBS = 100;
const PAGE = 1000;
/** Measured rounds: tiny's calls are short enough that more rounds cost little. */
const ROUNDS = { tiny: 21, medium: 7, full: 7 } as const;

interface Timings {
  count: number;
  list: number;
  cancel: number;
}

interface SizeRun {
  readonly backlog: number;
  readonly scheduler: Scheduler;
  readonly db: Database.Database;
  readonly dueFrom: number;
  readonly samples: Timings[];
  /** Removes the round's cancelled jobs (every finished job: the backlog is all pending). */
  readonly purge: () => Promise<void>;
  readonly close: () => Promise<void>;
}

export async function tagCost(sizes: Sizes): Promise<BenchResult> {
  const runs: SizeRun[] = [];
  const rounds = ROUNDS[sizes.scale];
  try {
    for (const n of sizes.tagBacklogs) runs.push(await openSize(n));
    for (const run of runs) {
      await timeRound(run, "account:warm-up", sizes.tagJobs);
      await run.purge();
    }
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < runs.length; k++) {
        const run = runs[(k + r) % runs.length]!;
        run.samples.push(await timeRound(run, `account:${r}`, sizes.tagJobs));
        await run.purge();
      }
      note(`tag-cost: round ${r + 1}/${rounds}`);
    }
    return report(sizes, runs, rounds);
  } finally {
    for (const run of runs) await run.close();
  }
}

async function openSize(n: number): Promise<SizeRun> {
  const { path, info } = await backlogFile(n, { prefix: "user:", perTag: USER_JOBS });
  const copy = scratchCopy(path, `tags-${n}`);
  const store = new SqliteStore({ path: copy.path });
  const scheduler = new Scheduler({ store });
  return {
    backlog: n,
    scheduler,
    db: store.connection,
    dueFrom: info.dueFrom,
    samples: [],
    purge: async () => {
      while ((await store.historyPurge({ before: Number.MAX_SAFE_INTEGER, limit: 5000 })) > 0);
    },
    close: async () => {
      await scheduler.close();
      copy.remove();
    },
  };
}

async function timeRound(run: SizeRun, tag: string, jobs: number): Promise<Timings> {
  const s = run.scheduler;
  const step = Math.floor(BACKLOG_SPAN_MS / jobs);
  await s.scheduleMany(
    Array.from({ length: jobs }, (_, i) => ({
      dueAt: run.dueFrom + i * step + 7,
      target: "noop",
      tags: [tag],
    })),
  );
  let t = performance.now();
  const counted = await s.countJobs({ tag });
  const countMs = performance.now() - t;
  t = performance.now();
  let listed = 0;
  let cursor: string | null = null;
  do {
    const page = await s.list({ tag, limit: PAGE, ...(cursor === null ? {} : { cursor }) });
    listed += page.jobs.length;
    cursor = page.nextCursor;
  } while (cursor !== null);
  const listMs = performance.now() - t;
  t = performance.now();
  const started = await s.startOperation({ kind: "cancel", filter: { tags: [tag] } });
  const op = await s.runOperation(started.operation.id);
  const cancelMs = performance.now() - t;
  if (counted !== jobs || listed !== jobs || op.state !== "done" || op.changed !== jobs) {
    throw new Error(
      `tag-cost ${count(run.backlog)}: counted ${counted}, listed ${listed}, ${op.state} with ${op.changed} cancelled, expected ${jobs}`,
    );
  }
  return { count: countMs, list: listMs, cancel: cancelMs };
}

function report(sizes: Sizes, runs: readonly SizeRun[], rounds: number): BenchResult {
  const med = (run: SizeRun, k: keyof Timings): number => median(run.samples.map((x) => x[k]));
  const small = runs[0]!;
  const large = runs[runs.length - 1]!;
  const vs = `${count(large.backlog)} vs ${count(small.backlog)} backlog`;
  const goal = (what: string, k: keyof Timings): GoalRow => {
    const a = med(large, k);
    const b = med(small, k);
    return {
      metric: `${what}, ${vs}`,
      value: `${fmt(a, 2)} ms`,
      goal: "<= 1.5x of smallest",
      baseline: `${fmt(b, 2)} ms`,
      ratio: ratio(a, b),
      pass: a / b <= 1.5,
    };
  };
  const jobs = sizes.tagJobs.toLocaleString("en-US");
  return {
    name: "tag-cost",
    title: `Tags: the ${jobs} jobs of one tag among a pending backlog (count, list, bulk cancel)`,
    goals: [
      goal(`cancel the tag's ${jobs} jobs (startOperation + runOperation)`, "cancel"),
      goal(`list the tag's ${jobs} jobs (pages of ${PAGE})`, "list"),
      goal(`count the tag's jobs (countJobs)`, "count"),
    ],
    details: [
      {
        title: "Median of the rounds, ms (per job for the cancel)",
        headers: ["backlog", "tag index entries", "countJobs", "list", "cancel", "cancel per job"],
        rows: runs.map((run) => [
          count(run.backlog),
          (run.db.prepare(`SELECT count(*) FROM job_tags`).pluck().get() as number).toLocaleString(
            "en-US",
          ),
          fmt(med(run, "count"), 3),
          fmt(med(run, "list"), 2),
          fmt(med(run, "cancel"), 2),
          `${fmt((1000 * med(run, "cancel")) / sizes.tagJobs, 1)} us`,
        ]),
      },
      {
        title: "Query plans (EXPLAIN QUERY PLAN, largest backlog)",
        headers: ["statement", "plan"],
        rows: [
          ["list page (tagPage)", plan(large.db, SQL.tagPage)],
          [
            "a tag-filtered operation's batch (operationStateByTagWalk)",
            plan(large.db, SQL.operationStateByTagWalk),
          ],
          ["countJobs (tagCount)", plan(large.db, SQL.tagCount)],
        ],
      },
    ],
    notes: [
      `${rounds} rounds after an untimed one per backlog, each visiting every backlog in turn with a fresh tag; the jobs a round cancelled are purged after it (untimed), so each round meets the backlog as loaded`,
      `backlog jobs carry a tag each (user:<n>, ${USER_JOBS} jobs a user); the tag's jobs are due across the backlog's 30 days`,
      "Scheduler defaults (operation batch 2,000 jobs, one transaction each); not started, so nothing else runs beside the calls",
    ],
  };
}

function plan(db: Database.Database, sql: string): string {
  const stmt = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const params = Object.fromEntries(
    [...sql.matchAll(/@(\w+)/g)].map((m) => [m[1]!, m[1] === "statuses" ? null : ""]),
  );
  const rows = stmt.all(params) as { detail: string }[];
  return rows.map((r) => r.detail).join("; ");
}
