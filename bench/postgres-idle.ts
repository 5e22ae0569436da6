import { Scheduler } from "../src/api/scheduler.js";
import { PartitionMaintenance } from "../src/stores/postgres/partition-maintenance.js";
import { ShardLeases } from "../src/stores/postgres/shard-leases.js";
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
 * Idle cost: a started node (Scheduler with maxIdleMs 30 s, shard leases heartbeating every
 * 5 s, partition maintenance every 60 s) on a large pending backlog with nothing due for
 * the whole window. Counts the statements the server executes per minute, whoever sends
 * them (our two reads of the counter excluded), by operation.
 */
export async function pgIdle(sizes: PgSizes): Promise<BenchResult> {
  const store = await benchStore("idle");
  try {
    const now = Date.now();
    await loadBacklog(store, sizes.idleBacklog, now + 10 * 60_000, 30 * DAY);
    const leases = new ShardLeases(store.context, { nodeId: "bench-node", heartbeatMs: 5000 });
    const maintenance = new PartitionMaintenance(store.context, { intervalMs: 60_000 });
    const scheduler = new Scheduler({
      store,
      nodeId: "bench-node",
      maxIdleMs: 30_000,
      shards: () => leases.owned(),
    });
    scheduler.handle("noop", async () => undefined);
    await leases.start();
    maintenance.start();
    scheduler.start();
    await new Promise((r) => setTimeout(r, 2000)); // first passes done
    const s0 = await statementCount(store);
    const byQuery0 = await perQuery(store);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, sizes.idleWindowMs));
    const s1 = await statementCount(store);
    const minutes = (performance.now() - t0) / 60_000;
    const byQuery1 = await perQuery(store);
    await scheduler.stop();
    await maintenance.stop();
    await leases.stop();
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
          metric: `${s1.source} per minute`,
          value: fmt(perMinute, 1),
          goal: "a handful, not one per poll per worker",
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
        "engine: watcher sleeps until the earliest due time or maxIdleMs (30 s); LISTEN/NOTIFY wakes it for earlier writes",
        "lease sweeper every 5 s and retention every 60 s are the engine's defaults; shard heartbeat every 5 s is one statement while the assignment holds",
      ],
    };
  } finally {
    await dropStore(store);
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
