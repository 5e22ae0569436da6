import { Scheduler } from "../src/api/scheduler.js";
import type { ScheduleInput } from "../src/core/schedule-input.js";
import type { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import type { Job } from "../src/core/job.js";
import { rowToJob, type JobRow } from "../src/stores/postgres/rows.js";
import { startNodeProcess, type NodeProcess } from "./lib/pg-node-process.js";
import { fmt, rate, type BenchResult } from "./lib/report.js";
import {
  benchServer,
  benchStore,
  dropStore,
  pgCpuMs,
  statementCount,
  type PgSizes,
} from "./postgres-common.js";

/** Partitions made ahead before a run: PartitionMaintenance's default for day buckets. */
const AHEAD_DAYS = 14;

/** One measured run: what fired, how long it took and what it cost. */
interface Run {
  readonly label: string;
  readonly fired: number;
  readonly secs: number;
  readonly nodeCpuMs: number;
  readonly pgCpuMs: number;
  readonly statements: number;
}

/**
 * Dispatch on PostgreSQL, measured as a user's deployment runs: node processes started with
 * `createScheduler({ db })` and every default, a no-op handler, and progress read from the
 * nodes over IPC (reading it from the database every 20 ms, as this benchmark once did,
 * was a fair share of the server's work). Besides the rate, which depends on this
 * machine's cores, each run reports CPU seconds per 1,000 fired jobs for the nodes and for
 * PostgreSQL (all of its processes), which does not, and which docs/operations-postgres.md
 * projects onto bigger machines.
 *
 * - floor: the least SQL per job against the schema, on `n` overdue jobs: the store's
 *   claim statement alone (500 rows, no BEGIN/COMMIT: the store's claim wraps it in a
 *   transaction for the series a claim advances) and its settle statement (500 rows), two
 *   loops in one process, as the engine's claimer and settler overlap;
 * - engine, overdue: one node draining `n` overdue jobs (what a new user tries first);
 * - store only, one claim and one settle in flight: the floor's SQL in the engine's shape
 *   (reported beside the goal: it parts what the engine adds from what the floor's second
 *   claim in flight gains);
 * - engine, due within one second: `n` jobs due across one second, 1, 2 and 3 nodes
 *   (left out with BENCH_DISPATCH_RUNS=overdue, for repeated runs of the goal's ratio).
 *
 * Every run's schema has its partitions made for the next `AHEAD_DAYS` days before it
 * starts, as a node's maintenance makes them: otherwise a node started on a fresh schema
 * creates them (DDL, locking the parent tables) inside the measured window, a one-off of
 * the deployment's first minute that the floor never paid.
 */
export async function pgDispatch(sizes: PgSizes): Promise<BenchResult> {
  const n = sizes.dispatchJobs;
  const runs: Run[] = [];
  runs.push(await floorRun(n));
  runs.push(await engineRun(n, 1, "overdue"));
  runs.push(await oneInFlightRun(n));
  const nodeCounts = process.env.BENCH_DISPATCH_RUNS === "overdue" ? [] : [1, 2, 3];
  for (const count of nodeCounts) runs.push(await engineRun(n, count, "due"));
  const oneInFlight = runs[2]!;
  const floor = runs[0]!;
  const overdue = runs[1]!;
  const perK = (ms: number, fired: number) => fmt(ms / fired, 3); // ms per job = s per 1,000
  return {
    name: "postgres-dispatch",
    title: `PostgreSQL dispatch: ${n.toLocaleString("en-US")} jobs, the store alone and 1 to 3 node processes`,
    goals: [
      {
        metric: "engine (1 node, overdue) vs least-SQL floor",
        value: rate(overdue.fired / overdue.secs),
        goal: ">= 0.8x",
        baseline: rate(floor.fired / floor.secs),
        ratio: `${fmt(overdue.fired / overdue.secs / (floor.fired / floor.secs), 2)}x`,
        pass: overdue.fired / overdue.secs >= 0.8 * (floor.fired / floor.secs),
      },
      {
        metric: "engine (1 node, overdue) vs the same SQL one claim and one settle in flight",
        value: rate(overdue.fired / overdue.secs),
        goal: "-",
        baseline: rate(oneInFlight.fired / oneInFlight.secs),
        ratio: `${fmt(overdue.fired / overdue.secs / (oneInFlight.fired / oneInFlight.secs), 2)}x`,
        pass: null,
      },
    ],
    details: [
      {
        title: "#### Runs",
        headers: [
          "run",
          "fired/s",
          "seconds",
          "node CPU s per 1,000 jobs",
          "PostgreSQL CPU s per 1,000 jobs",
          "statements per fired job",
        ],
        rows: runs.map((r) => [
          r.label,
          rate(r.fired / r.secs),
          r.secs.toFixed(2),
          perK(r.nodeCpuMs, r.fired),
          perK(r.pgCpuMs, r.fired),
          (r.statements / r.fired).toFixed(3),
        ]),
      },
    ],
    notes: [
      "nodes, the writer and PostgreSQL share this machine's cores: rates are this machine's; CPU seconds per 1,000 jobs are what a job costs wherever it runs",
      "PostgreSQL with fsync and synchronous_commit on; node CPU is process.cpuUsage() of the node processes from their start (the floor: the benchmark process itself)",
    ],
  };
}

/** The least SQL on `n` overdue jobs: claim 500 (one statement) and settle them, two loops. */
async function floorRun(n: number): Promise<Run> {
  return storeOnlyRun(n, "floor: least SQL, overdue", async (store) => {
    let fired = 0;
    const loop = async (owner: string) => {
      for (;;) {
        const now = Date.now();
        const batch = await claimStatement(store, owner, now);
        if (batch.length === 0) return;
        await settleAll(store, batch, now);
        fired += batch.length;
      }
    };
    await Promise.all([loop("floor/1"), loop("floor/2")]);
    return fired;
  });
}

/**
 * The same SQL in the engine's shape: one claim in flight at a time (the watcher's), its
 * batches settled by one settle in flight at a time taking what has been claimed (the
 * settler's, at most 1,000). Against the floor it shows what the second claim in flight is
 * worth; against the engine, what the engine adds beyond the SQL.
 */
async function oneInFlightRun(n: number): Promise<Run> {
  return storeOnlyRun(n, "store only, one claim and one settle in flight", async (store) => {
    let fired = 0;
    let claimedAll = false;
    const claimed: Job[] = [];
    let wake: (() => void) | null = null;
    const settler = async () => {
      for (;;) {
        if (claimed.length === 0) {
          if (claimedAll) return;
          await new Promise<void>((r) => (wake = r));
          continue;
        }
        const batch = claimed.splice(0, 1000);
        await settleAll(store, batch, Date.now());
        fired += batch.length;
      }
    };
    const settling = settler();
    for (;;) {
      const batch = await claimStatement(store, "floor/1", Date.now());
      claimed.push(...batch);
      if (batch.length === 0) claimedAll = true;
      const w: (() => void) | null = wake;
      wake = null;
      if (w !== null) (w as () => void)();
      if (claimedAll) break;
    }
    await settling;
    return fired;
  });
}

/** The store's claim statement alone: 500 overdue jobs, no transaction around it. */
async function claimStatement(store: PostgresStore, owner: string, now: number): Promise<Job[]> {
  // claimDue's parameters: due before, limit, owner, now, shards, lease
  const { rows } = await store.connection.query<JobRow>(store.context.sql.claimDue, [
    now,
    500,
    owner,
    now,
    null,
    30_000,
  ]);
  return rows.map(rowToJob);
}

async function settleAll(store: PostgresStore, batch: readonly Job[], now: number): Promise<void> {
  await store.jobsSettle({
    now,
    settlements: batch.map((j) => ({
      id: j.id,
      fence: j.fence,
      firedAt: now,
      outcome: "succeeded" as const,
      result: null,
    })),
  });
}

/** `n` overdue jobs on a fresh schema fired by `fire` in this process, and what it cost. */
async function storeOnlyRun(
  n: number,
  label: string,
  fire: (store: PostgresStore) => Promise<number>,
): Promise<Run> {
  const store = await benchStore("floor", AHEAD_DAYS);
  try {
    await write(store, n, () => Date.now() - 60_000);
    const before = await costs(store);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const fired = await fire(store);
    const secs = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const after = await costs(store);
    return {
      label,
      fired,
      secs,
      nodeCpuMs: (cpu.user + cpu.system) / 1000,
      pgCpuMs: after.pgMs - before.pgMs,
      statements: after.statements - before.statements - 2,
    };
  } finally {
    await dropStore(store);
  }
}

/**
 * `count` node processes fire `n` jobs: "overdue" ones written before the nodes start, or
 * ones "due" across one second starting after every write is done.
 */
async function engineRun(n: number, count: number, kind: "overdue" | "due"): Promise<Run> {
  const srv = await benchServer();
  const store = await benchStore(`dispatch${kind}${count}`, AHEAD_DAYS);
  const nodes: NodeProcess[] = [];
  try {
    for (let i = 0; i < count; i++)
      nodes.push(await startNodeProcess(srv.url, store.schema, `node-${i}`));
    let t0: number;
    let before: { pgMs: number; statements: number };
    if (kind === "overdue") {
      await write(store, n, () => Date.now() - 60_000);
      before = await costs(store);
      t0 = performance.now();
      await Promise.all(nodes.map((nd) => nd.ask("start")));
    } else {
      await Promise.all(nodes.map((nd) => nd.ask("start")));
      await new Promise((r) => setTimeout(r, 3000)); // shard leases settle among the nodes
      const dueAt = Date.now() + Math.max(2000, Math.ceil(n / 15)); // every write done before then
      await write(store, n, () => dueAt, true);
      await new Promise((r) => setTimeout(r, Math.max(0, dueAt - Date.now())));
      before = await costs(store);
      t0 = performance.now() - Math.max(0, Date.now() - dueAt);
    }
    const cpuAtT0 = await Promise.all(nodes.map((nd) => nd.ask("report")));
    let reports = cpuAtT0;
    while (reports.reduce((a, r) => a + r.succeeded, 0) < n) {
      await new Promise((r) => setTimeout(r, 20));
      reports = await Promise.all(nodes.map((nd) => nd.ask("report")));
    }
    const secs = (performance.now() - t0) / 1000;
    const after = await costs(store);
    return {
      label: `engine, ${count} node${count === 1 ? "" : "s"}, ${kind === "overdue" ? "overdue" : "due within 1 s"}`,
      fired: n,
      secs,
      nodeCpuMs: reports.reduce((a, r, i) => a + r.cpuMs - cpuAtT0[i]!.cpuMs, 0),
      pgCpuMs: after.pgMs - before.pgMs,
      statements: after.statements - before.statements - 2,
    };
  } finally {
    await Promise.all(nodes.map((nd) => nd.stop()));
    await dropStore(store);
  }
}

/**
 * Writes `n` jobs through a Scheduler that is never started, 10,000 per call, due at
 * `dueAt()`, or with `spread` across one second from it.
 */
async function write(
  store: PostgresStore,
  n: number,
  dueAt: () => number,
  spread = false,
): Promise<void> {
  const writer = new Scheduler({ store, maxPastMs: null });
  const base = dueAt();
  const inputs: ScheduleInput[] = Array.from({ length: n }, (_, i) => ({
    dueAt: spread ? base + Math.floor((i * 1000) / n) : base,
    target: "noop",
  }));
  for (let i = 0; i < n; i += 10_000) await writer.scheduleMany(inputs.slice(i, i + 10_000));
}

async function costs(store: PostgresStore): Promise<{ pgMs: number; statements: number }> {
  const statements = (await statementCount(store)).n;
  return { pgMs: await pgCpuMs(store), statements };
}
