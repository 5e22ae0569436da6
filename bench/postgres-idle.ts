import { Scheduler } from "../src/api/scheduler.js";
import { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import pg from "pg";
import {
  countTransactions,
  type TransactionCount,
  type TransactionCounter,
} from "./lib/pg-transactions.js";
import { fmt, type BenchResult, type GoalRow } from "./lib/report.js";
import {
  DAY,
  benchServer,
  benchStore,
  dropStore,
  loadBacklog,
  type PgSizes,
} from "./postgres-common.js";

/** The goal of issue 14: transactions a minute per idle node. */
const GOAL_PER_NODE = 10;

/**
 * Idle cost: nodes started as a user starts them (Scheduler defaults, shard leases,
 * liveness locks and partition maintenance from the store) on a large pending backlog, one
 * job due in two days and nothing else due for the whole window; once with one node, once
 * with three. Two counts a minute, kept apart:
 *
 * - duetime's own transactions, counted at the nodes' clients (lib/pg-transactions.ts:
 *   each connection's start-up, each statement outside a block, each BEGIN ... COMMIT):
 *   exactly what the nodes make the server run, and what the goal is about;
 * - every transaction of the database (pg_stat_database), whoever ran it: the nodes',
 *   autovacuum's workers' (each table they vacuum or analyse is a transaction, and so is
 *   their start), the server's; the benchmark's own reads are subtracted.
 *
 * Each run counts two windows: one inside the nodes' first lease, when a node looks every
 * second for claims a predecessor of its name left behind (reported, no goal: it lasts one
 * lease after a start), and the steady state after it, which the goal is about.
 *
 * The backlog is vacuumed and analysed after loading (once the loader's statistics have
 * reached the server), so autovacuum's one-off work on fresh rows stays out of the window;
 * the autovacuum runs it still makes are reported, on duetime's tables and on the catalog.
 */
export async function pgIdle(sizes: PgSizes): Promise<BenchResult> {
  const info = (metric: string, value: string): GoalRow => ({
    metric,
    value,
    goal: "-",
    baseline: "-",
    ratio: "-",
    pass: null,
  });
  const one = await measureIdle(sizes, 1);
  const three = await measureIdle(sizes, 3);
  const firstLease = (nodes: number, m: IdleMeasure): GoalRow =>
    info(
      `duetime's transactions per minute per node, ${nodes} node${nodes > 1 ? "s" : ""}, in the first lease (no goal)`,
      fmt(m.own.transactions / nodes, 1),
    );
  const goal = (nodes: number, m: IdleMeasure): GoalRow => ({
    metric: `duetime's transactions per minute per node, ${nodes} node${nodes > 1 ? "s" : ""} (counted at its clients)`,
    value: fmt(m.own.transactions / nodes, 1),
    goal: `<= ${GOAL_PER_NODE}`,
    baseline: "-",
    ratio: "-",
    pass: m.own.transactions / nodes <= GOAL_PER_NODE,
  });
  const rows = (nodes: number, m: IdleMeasure): GoalRow[] => {
    const label = `${nodes} node${nodes > 1 ? "s" : ""}`;
    return [
      goal(nodes, m),
      info(`duetime's statements per minute per node, ${label}`, fmt(m.own.statements / nodes, 1)),
      info(`connections opened per minute, ${label}`, fmt(m.own.connections, 1)),
      info(
        `every transaction per minute per node, ${label} (pg_stat_database)`,
        fmt(m.transactions / nodes, 1),
      ),
      info(
        `of all of them, not duetime's (autovacuum, the server) per minute, ${label}`,
        fmt(m.transactions - m.own.transactions, 1),
      ),
      info(
        `autovacuum runs in the window, ${label}: duetime's tables / catalog`,
        `${m.autovacuums.own} / ${m.autovacuums.catalog}`,
      ),
    ];
  };
  return {
    name: "postgres-idle",
    title: `PostgreSQL idle cost: ${sizes.idleBacklog.toLocaleString("en-US")} pending jobs, nothing due`,
    goals: [
      ...rows(1, one.steady),
      ...rows(3, three.steady),
      firstLease(1, one.firstLease),
      firstLease(3, three.firstLease),
    ],
    details: [
      {
        title: "#### Per minute, by statement (1 node, pg_stat_statements)",
        headers: ["statement", "per minute"],
        rows: one.steady.byStatement.map(([q, n]) => [q, fmt(n, 1)]),
      },
      {
        title: "#### Per minute, by statement (3 nodes, all of them)",
        headers: ["statement", "per minute"],
        rows: three.steady.byStatement.map(([q, n]) => [q, fmt(n, 1)]),
      },
    ],
    notes: [
      "nodes with the Scheduler's and the store's defaults (as createScheduler starts them), one store each, one job due in two days on the backlog",
      `steady state counted over ${sizes.idleWindowMs / 1000} s from ${sizes.idleWarmupMs / 1000} s after the start (past a node's first lease, 15 s, when it looks for its predecessor's claims every second); the first lease counted over ${sizes.idleFirstLeaseWindowMs / 1000} s from ${FIRST_LEASE_OFFSET_MS / 1000} s`,
      ...(sizes.idleWindowMs < 60_000
        ? [
            `a ${sizes.idleWindowMs / 1000} s window is a smoke figure: the periodic work runs every 30-60 s, so it holds 0 to 2 of them (${fmt(60_000 / sizes.idleWindowMs, 0)} a minute each); the medium and full runs count 60 s`,
          ]
        : []),
      "duetime's transactions: each connection opened, each statement outside BEGIN ... COMMIT and each such block, counted in the nodes' node-postgres clients; every transaction: pg_stat_database's commits and rollbacks, the benchmark's own reads subtracted (a server reports a backend's counts up to 10 s late, so this one is a rate over a shifted window)",
    ],
  };
}

interface IdleMeasure {
  /** Per minute, all nodes together: what the nodes' clients sent. */
  readonly own: TransactionCount;
  /** Per minute: every transaction of the database. */
  readonly transactions: number;
  /** Autovacuum and autoanalyze runs in the window. */
  readonly autovacuums: { readonly own: number; readonly catalog: number };
  readonly byStatement: readonly (readonly [string, number])[];
}

/** The steady window (the goal's) and the window inside the nodes' first lease. */
interface IdlePhases {
  readonly steady: IdleMeasure;
  readonly firstLease: IdleMeasure;
}

async function measureIdle(sizes: PgSizes, nodes: number): Promise<IdlePhases> {
  const counter = countTransactions();
  const url = (await benchServer()).url;
  const reader = new pg.Client({ connectionString: url, application_name: "duetime-bench" });
  counter.exclude(reader);
  await reader.connect();
  const store = await benchStore("idle");
  const others: PostgresStore[] = [];
  const schedulers: Scheduler[] = [];
  try {
    const now = Date.now();
    await loadBacklog(store, sizes.idleBacklog, now + 10 * 60_000, 30 * DAY);
    // A backend reports its statistics up to 10 s after its last statement: vacuuming
    // before the loader's arrive would leave its rows looking unvacuumed to autovacuum.
    await new Promise((r) => setTimeout(r, sizes.idleSettleMs));
    // the whole database: the fresh rows' partitions and counters, and the catalog
    await reader.query("VACUUM ANALYZE");
    for (let i = 1; i < nodes; i++) {
      others.push(await PostgresStore.open({ url, schema: store.schema, poolSize: 8 }));
    }
    for (const [i, s] of [store, ...others].entries()) {
      const scheduler = new Scheduler({ store: s, nodeId: `bench-node-${i + 1}` });
      scheduler.handle("noop", async () => undefined);
      schedulers.push(scheduler);
    }
    await schedulers[0]!.schedule({ dueAt: now + 2 * DAY, target: "noop" });
    for (const s of schedulers) s.start();
    const startedAt = performance.now();
    const window = (ms: number) => countWindow(reader, store.schema, counter, ms);
    await sleepUntil(startedAt + FIRST_LEASE_OFFSET_MS);
    const firstLease = await window(sizes.idleFirstLeaseWindowMs);
    if (performance.now() > startedAt + sizes.idleWarmupMs) {
      throw new Error("idle benchmark: the first-lease window ran past the warm-up");
    }
    await sleepUntil(startedAt + sizes.idleWarmupMs);
    return { firstLease, steady: await window(sizes.idleWindowMs) };
  } finally {
    await Promise.all(schedulers.map((s) => s.stop()));
    for (const o of others) await o.close();
    await dropStore(store);
    await reader.end();
    counter.uninstall();
  }
}

/** Where the first-lease window starts after the nodes start: past their start-up statements. */
const FIRST_LEASE_OFFSET_MS = 1000;

function sleepUntil(at: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, at - performance.now())));
}

/** Counts `ms` from now: duetime's transactions at its clients, the database's, by statement. */
async function countWindow(
  reader: pg.Client,
  schema: string,
  counter: TransactionCounter,
  ms: number,
): Promise<IdleMeasure> {
  const x0 = await counters(reader, schema);
  const byQuery0 = await perQuery(reader, schema);
  const own0 = counter.read();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const own1 = counter.read();
  const minutes = (performance.now() - t0) / 60_000;
  const byQuery1 = await perQuery(reader, schema);
  const x1 = await counters(reader, schema);
  const perOp = [...byQuery1.entries()]
    // the bench's own reads (the node's vacuum check reads pg_stat_user_tables: kept)
    .filter(([q]) => !/pg_stat_(?:statements|database|clear_snapshot|all_tables)/.test(q))
    .map(([q, n]) => [q, (n - (byQuery0.get(q) ?? 0)) / minutes] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const rate = (k: keyof TransactionCount) => (own1[k] - own0[k]) / minutes;
  return {
    own: {
      connections: rate("connections"),
      statements: rate("statements"),
      transactions: rate("transactions"),
    },
    // our own reads between the two counts: four statements, each its own transaction
    transactions: (x1.transactions - x0.transactions - 4) / minutes,
    autovacuums: { own: x1.ownVacuums - x0.ownVacuums, catalog: x1.vacuums - x0.vacuums },
    byStatement: perOp.slice(0, 14),
  };
}

/**
 * Transactions committed or rolled back so far, and autovacuum and autoanalyze runs on the
 * schema's tables and on the others (a fresh snapshot).
 */
async function counters(reader: pg.Client, schema: string) {
  await reader.query("SELECT pg_stat_clear_snapshot()");
  const r = await reader.query<{ n: number; own: number; other: number }>(
    `SELECT (SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database
              WHERE datname = current_database()) AS n,
            (SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0)::bigint
              FROM pg_stat_all_tables WHERE schemaname = $1) AS own,
            (SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0)::bigint
              FROM pg_stat_all_tables WHERE schemaname <> $1) AS other`,
    [schema],
  );
  const row = r.rows[0]!;
  return { transactions: Number(row.n), ownVacuums: Number(row.own), vacuums: Number(row.other) };
}

/** Calls per normalised statement (first words), from pg_stat_statements when loaded. */
async function perQuery(reader: pg.Client, schema: string) {
  const out = new Map<string, number>();
  try {
    const r = await reader.query<{ query: string; calls: number }>(
      `SELECT query, calls::bigint AS calls FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    for (const row of r.rows) {
      const label = row.query
        .replace(/\s+/g, " ")
        .replace(new RegExp(`"${schema}"\\.`, "g"), "")
        .slice(0, 70);
      out.set(label, (out.get(label) ?? 0) + Number(row.calls));
    }
  } catch {
    // pg_stat_statements not loaded: only the totals are reported
  }
  return out;
}
