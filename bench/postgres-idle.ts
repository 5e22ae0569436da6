import { Scheduler } from "../src/api/scheduler.js";
import { fmt, type BenchResult } from "./lib/report.js";
import {
  DAY,
  benchStore,
  dropStore,
  loadBacklog,
  statementCount,
  type PgSizes,
} from "./postgres-common.js";

/**
 * Idle cost: one node started as a user starts it (Scheduler defaults, shard leases and
 * partition maintenance from the store) on a large pending backlog, one job due in two days
 * and nothing else due for the whole window. Counts the transactions (pg_stat_database) and
 * statements (pg_stat_statements) the server executes per minute, whoever sends them (our
 * own reads excluded), by operation.
 */
export async function pgIdle(sizes: PgSizes): Promise<BenchResult> {
  const store = await benchStore("idle");
  try {
    const now = Date.now();
    await loadBacklog(store, sizes.idleBacklog, now + 10 * 60_000, 30 * DAY);
    // A node as a user starts one: Scheduler defaults, its own shard leases and maintenance
    // (store.nodeStart), one job due in two days.
    const scheduler = new Scheduler({ store, nodeId: "bench-node" });
    scheduler.handle("noop", async () => undefined);
    await scheduler.schedule({ dueAt: now + 2 * DAY, target: "noop" });
    scheduler.start();
    await new Promise((r) => setTimeout(r, 2000)); // first passes done
    const x0 = await transactionCount(store);
    const s0 = await statementCount(store);
    const byQuery0 = await perQuery(store);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, sizes.idleWindowMs));
    const s1 = await statementCount(store);
    const byQuery1 = await perQuery(store);
    const x1 = await transactionCount(store);
    const minutes = (performance.now() - t0) / 60_000;
    await scheduler.stop();
    const perOp = [...byQuery1.entries()]
      .filter(([q]) => !q.includes("pg_stat_"))
      .map(([q, n]) => [q, (n - (byQuery0.get(q) ?? 0)) / minutes] as const);
    // with pg_stat_statements, our own reads of it are left out; without, one is subtracted
    const perMinute =
      perOp.length > 0 ? perOp.reduce((a, [, n]) => a + n, 0) : (s1.n - s0.n - 1) / minutes;
    const ops = perOp
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([q, n]) => [q, fmt(n, 1)]);
    return {
      name: "postgres-idle",
      title: `PostgreSQL idle cost: one node, ${sizes.idleBacklog.toLocaleString("en-US")} pending jobs, nothing due`,
      goals: [
        {
          // Our own reads between the two counts: three statements, each its own transaction.
          metric: "transactions per minute (pg_stat_database)",
          value: fmt((x1 - x0 - 3) / minutes, 1),
          goal: "<= 10",
          baseline: "-",
          ratio: "-",
          pass: (x1 - x0 - 3) / minutes <= 10,
        },
        {
          metric: `${s1.source} per minute`,
          value: fmt(perMinute, 1),
          goal: "-",
          baseline: "-",
          ratio: "-",
          pass: null,
        },
      ],
      details:
        ops.length > 0
          ? [
              {
                title: "#### Per minute, by statement",
                headers: ["statement", "per minute"],
                rows: ops,
              },
            ]
          : [],
      notes: [
        "one node with the Scheduler's and the store's defaults (as createScheduler starts it), one job due in two days on the backlog",
        "transactions are every commit and rollback in the database (pg_stat_database), whoever sent them; the bench's own reads are subtracted",
      ],
    };
  } finally {
    await dropStore(store);
  }
}

/** Transactions committed or rolled back in the database so far (a fresh snapshot). */
async function transactionCount(
  store: import("../src/stores/postgres/postgres-store.js").PostgresStore,
): Promise<number> {
  const client = await store.connection.connect();
  try {
    await client.query("SELECT pg_stat_clear_snapshot()");
    const r = await client.query<{ n: number }>(
      `SELECT (xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database
       WHERE datname = current_database()`,
    );
    return Number(r.rows[0]!.n);
  } finally {
    client.release();
  }
}

/** Calls per normalised statement (first words), from pg_stat_statements when loaded. */
async function perQuery(store: import("../src/stores/postgres/postgres-store.js").PostgresStore) {
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
    // pg_stat_statements not loaded: only the total is reported
  }
  return out;
}
