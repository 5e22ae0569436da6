import { Scheduler } from "../src/api/scheduler.js";
import { PostgresStore } from "../src/stores/postgres/postgres-store.js";
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
 * with three. Counts the transactions (pg_stat_database) and statements
 * (pg_stat_statements) the server executes per minute, whoever sends them (our own reads
 * excluded), per node and by operation. The backlog is vacuumed and analysed after loading,
 * so autovacuum's one-off work on fresh rows stays out of the window; what it still does is
 * reported beside the figures.
 */
export async function pgIdle(sizes: PgSizes): Promise<BenchResult> {
  const one = await measureIdle(sizes, 1);
  const three = await measureIdle(sizes, 3);
  const goal = (nodes: number, m: IdleMeasure): GoalRow => ({
    metric: `transactions per minute per node, ${nodes} node${nodes > 1 ? "s" : ""} (pg_stat_database)`,
    value: fmt(m.transactions / nodes, 1),
    goal: `<= ${GOAL_PER_NODE}`,
    baseline: "-",
    ratio: "-",
    pass: m.transactions / nodes <= GOAL_PER_NODE,
  });
  const info = (metric: string, value: string): GoalRow => ({
    metric,
    value,
    goal: "-",
    baseline: "-",
    ratio: "-",
    pass: null,
  });
  return {
    name: "postgres-idle",
    title: `PostgreSQL idle cost: ${sizes.idleBacklog.toLocaleString("en-US")} pending jobs, nothing due`,
    goals: [
      goal(1, one),
      info("statements per minute per node, 1 node (pg_stat_statements)", fmt(one.statements, 1)),
      info("autovacuum runs in the window, 1 node", String(one.autovacuums)),
      goal(3, three),
      info(
        "statements per minute per node, 3 nodes (pg_stat_statements)",
        fmt(three.statements / 3, 1),
      ),
      info("autovacuum runs in the window, 3 nodes", String(three.autovacuums)),
    ],
    details: [
      {
        title: "#### Per minute, by statement (1 node)",
        headers: ["statement", "per minute"],
        rows: one.byStatement.map(([q, n]) => [q, fmt(n, 1)]),
      },
      {
        title: "#### Per minute, by statement (3 nodes, all of them)",
        headers: ["statement", "per minute"],
        rows: three.byStatement.map(([q, n]) => [q, fmt(n, 1)]),
      },
    ],
    notes: [
      "nodes with the Scheduler's and the store's defaults (as createScheduler starts them), one store each, one job due in two days on the backlog",
      `counted over ${sizes.idleWindowMs / 1000} s after ${sizes.idleWarmupMs / 1000} s of warm-up (a node's first lease, 15 s, looks for its predecessor's claims every second)`,
      "transactions are every commit and rollback in the database (pg_stat_database), whoever sent them (autovacuum's included); the bench's own reads are subtracted",
    ],
  };
}

interface IdleMeasure {
  /** Per minute, all nodes together. */
  readonly transactions: number;
  readonly statements: number;
  readonly autovacuums: number;
  readonly byStatement: readonly (readonly [string, number])[];
}

async function measureIdle(sizes: PgSizes, nodes: number): Promise<IdleMeasure> {
  const store = await benchStore("idle");
  const others: PostgresStore[] = [];
  const schedulers: Scheduler[] = [];
  try {
    const now = Date.now();
    await loadBacklog(store, sizes.idleBacklog, now + 10 * 60_000, 30 * DAY);
    // the whole database: the fresh rows' partitions and counters, and the catalog
    await store.connection.query("VACUUM ANALYZE");
    const url = (await benchServer()).url;
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
    await new Promise((r) => setTimeout(r, sizes.idleWarmupMs));
    const x0 = await counters(store);
    const byQuery0 = await perQuery(store);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, sizes.idleWindowMs));
    const byQuery1 = await perQuery(store);
    const x1 = await counters(store);
    const minutes = (performance.now() - t0) / 60_000;
    const perOp = [...byQuery1.entries()]
      // the bench's own reads (the node's vacuum check reads pg_stat_user_tables: kept)
      .filter(([q]) => !/pg_stat_(?:statements|database|clear_snapshot|all_tables)/.test(q))
      .map(([q, n]) => [q, (n - (byQuery0.get(q) ?? 0)) / minutes] as const)
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]);
    return {
      // our own reads between the two counts: four statements, each its own transaction
      transactions: (x1.transactions - x0.transactions - 4) / minutes,
      statements: perOp.reduce((a, [, n]) => a + n, 0),
      autovacuums: x1.autovacuums - x0.autovacuums,
      byStatement: perOp.slice(0, 14),
    };
  } finally {
    await Promise.all(schedulers.map((s) => s.stop()));
    for (const o of others) await o.close();
    await dropStore(store);
  }
}

/** Transactions committed or rolled back so far, and autovacuum runs (a fresh snapshot). */
async function counters(
  store: PostgresStore,
): Promise<{ transactions: number; autovacuums: number }> {
  const client = await store.connection.connect();
  try {
    await client.query("SELECT pg_stat_clear_snapshot()");
    const r = await client.query<{ n: number; av: number }>(
      `SELECT (SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database
                WHERE datname = current_database()) AS n,
              (SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0)::bigint
                FROM pg_stat_all_tables) AS av`,
    );
    return { transactions: Number(r.rows[0]!.n), autovacuums: Number(r.rows[0]!.av) };
  } finally {
    client.release();
  }
}

/** Calls per normalised statement (first words), from pg_stat_statements when loaded. */
async function perQuery(store: PostgresStore) {
  const out = new Map<string, number>();
  try {
    const r = await store.connection.query<{ query: string; calls: number }>(
      `SELECT query, calls::bigint AS calls FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    for (const row of r.rows) {
      const label = row.query
        .replace(/\s+/g, " ")
        .replace(new RegExp(`"${store.schema}"\\.`, "g"), "")
        .slice(0, 70);
      out.set(label, (out.get(label) ?? 0) + Number(row.calls));
    }
  } catch {
    // pg_stat_statements not loaded: only the totals are reported
  }
  return out;
}
