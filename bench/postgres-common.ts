/**
 * Shared pieces of the PostgreSQL benchmarks: sizes (BENCH_SCALE=tiny for the CI smoke
 * run), the server (the one named by PG_URL, else a private throwaway server with
 * pg_stat_statements loaded, as in the tests), job generation and bulk backlog loading,
 * and statement counting.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createIdGenerator } from "../src/core/ids.js";
import type { NewJob } from "../src/core/job.js";
import { PartitionMaintenance } from "../src/stores/postgres/partition-maintenance.js";
import { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import pg from "pg";
import type { PostgresStoreOptions } from "../src/stores/postgres/options.js";
import {
  childrenOf,
  freshSchema,
  startPostgres,
  type PostgresServer,
} from "../test/support/postgres-server.js";

export const DAY = 86_400_000;

export interface PgSizes {
  readonly scale: "tiny" | "medium" | "full";
  /** Jobs of the bulk insert benchmark. */
  readonly bulkJobs: number;
  /** Pending future backlogs the claim-cost benchmark compares (smaller first). */
  readonly claimBacklogs: readonly [number, number];
  /** Poll rounds timed per backlog. */
  readonly claimRounds: number;
  /** Jobs fired by the churn benchmark. */
  readonly churnJobs: number;
  /** Backlog of the idle benchmark, and its window in the steady state (the goal's). */
  readonly idleBacklog: number;
  readonly idleWindowMs: number;
  /**
   * Start of the steady window after the nodes start: past their first lease (15 s), when
   * a node looks for its predecessor's claims every second.
   */
  readonly idleWarmupMs: number;
  /** Window counted inside that first lease, from 1 s after the start (reported, no goal). */
  readonly idleFirstLeaseWindowMs: number;
  /** Wait between loading the idle backlog and vacuuming it (the loader's statistics reach the server). */
  readonly idleSettleMs: number;
  /** Precision run: jobs, the window they are due across (ms), and the backlog under them. */
  readonly precisionJobs: number;
  readonly precisionWindowMs: number;
  readonly precisionBacklog: number;
  /** Due jobs fired by 1, 2 and 3 node processes in the dispatch benchmark. */
  readonly dispatchJobs: number;
  /** Jobs of the paused tenant in the paused-idle benchmark (and of the unpaused one beside it). */
  readonly pausedJobs: number;
  /** Its idle window, counted from `pausedIdleWarmupMs` after the two nodes start. */
  readonly pausedIdleWindowMs: number;
  readonly pausedIdleWarmupMs: number;
  /** Untagged backlog of the bulk-erase benchmark, and the tagged jobs it cancels and erases. */
  readonly eraseBacklog: number;
  readonly eraseJobs: number;
}

export function pgSizes(env: NodeJS.ProcessEnv = process.env): PgSizes {
  const scale = env.BENCH_SCALE ?? "full";
  if (scale === "tiny") {
    return {
      scale,
      bulkJobs: 20_000,
      claimBacklogs: [1_000, 20_000],
      claimRounds: 10,
      churnJobs: 10_000,
      idleBacklog: 10_000,
      idleWindowMs: 10_000,
      idleWarmupMs: 16_000,
      idleFirstLeaseWindowMs: 5_000,
      idleSettleMs: 0,
      precisionJobs: 2_000,
      precisionWindowMs: 2_000,
      precisionBacklog: 10_000,
      dispatchJobs: 5_000,
      pausedJobs: 10_000,
      pausedIdleWindowMs: 6_000,
      pausedIdleWarmupMs: 2_000,
      eraseBacklog: 10_000,
      eraseJobs: 2_000,
    };
  }
  if (scale === "medium") {
    return {
      scale,
      bulkJobs: 200_000,
      claimBacklogs: [10_000, 1_000_000],
      claimRounds: 20,
      churnJobs: 100_000,
      idleBacklog: 1_000_000,
      idleWindowMs: 60_000,
      idleWarmupMs: 17_000,
      idleFirstLeaseWindowMs: 12_000,
      idleSettleMs: 11_000,
      precisionJobs: 5_000,
      precisionWindowMs: 5_000,
      precisionBacklog: 100_000,
      dispatchJobs: 60_000,
      pausedJobs: 100_000,
      pausedIdleWindowMs: 60_000,
      pausedIdleWarmupMs: 17_000,
      eraseBacklog: 1_000_000,
      eraseJobs: 10_000,
    };
  }
  if (scale === "full") {
    return {
      scale,
      bulkJobs: 1_000_000,
      claimBacklogs: [10_000, 10_000_000],
      claimRounds: 40,
      churnJobs: 1_000_000,
      idleBacklog: 10_000_000,
      idleWindowMs: 60_000,
      idleWarmupMs: 17_000,
      idleFirstLeaseWindowMs: 12_000,
      idleSettleMs: 11_000,
      precisionJobs: 20_000,
      precisionWindowMs: 10_000,
      precisionBacklog: 1_000_000,
      dispatchJobs: 200_000,
      pausedJobs: 1_000_000,
      pausedIdleWindowMs: 60_000,
      pausedIdleWarmupMs: 17_000,
      eraseBacklog: 10_000_000,
      eraseJobs: 10_000,
    };
  }
  throw new Error(`BENCH_SCALE: expected "tiny", "medium" or "full", got ${JSON.stringify(scale)}`);
}

let server: PostgresServer | null = null;

/** The benchmark server (started once per run). */
export async function benchServer(): Promise<PostgresServer> {
  if (!server) {
    server = await startPostgres({
      settings: {
        shared_preload_libraries: "pg_stat_statements",
        "pg_stat_statements.track": "top",
        // durability as in production: the benchmarks measure commits honestly
        fsync: "on",
        synchronous_commit: "on",
        full_page_writes: "on",
        shared_buffers: "1GB",
        max_wal_size: "8GB",
        checkpoint_timeout: "30min",
      },
    });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    // Statement counts for the idle and churn benchmarks; absent on a server without it.
    await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").catch(() => {});
    await client.end();
  }
  return server;
}

export async function stopBenchServer(): Promise<void> {
  await server?.stop();
  server = null;
}

/** A store on a fresh schema of the benchmark server, partitions made for the next `days`. */
export async function benchStore(
  prefix: string,
  days = 31,
  options: Partial<PostgresStoreOptions> = {},
): Promise<PostgresStore> {
  const srv = await benchServer();
  const store = await PostgresStore.open({
    url: srv.url,
    schema: freshSchema(prefix),
    poolSize: 8,
    ...options,
  });
  await new PartitionMaintenance(store.context, { aheadBuckets: days }).runOnce(Date.now());
  return store;
}

/** Drops a benchmark schema (its data can be gigabytes). */
export async function dropStore(store: PostgresStore): Promise<void> {
  await store.connection.query(`DROP SCHEMA "${store.schema}" CASCADE`);
  await store.close();
}

/** A generator of valid NewJobs, due at `dueAt` (the store places them). */
export function jobFactory() {
  const newId = createIdGenerator();
  return (dueAt: number): NewJob => {
    return {
      id: newId(),
      tenant: "default",
      key: null,
      dueAt,
      payload: { to: "user@example.com", text: "reminder" },
      target: "noop",
      targetOptions: null,
      maxAttempts: 3,
      expireAfterMs: null,
    };
  };
}

/**
 * Loads `count` pending jobs due uniformly in [from, from + spanMs) straight into
 * jobs_live, server-side, a million rows per statement (the statement trigger keeps the
 * bucket counters exact). For backlogs too large to push through the client quickly; the
 * rows are never looked up by id, so their ids are plain sequence numbers.
 */
export async function loadBacklog(
  store: PostgresStore,
  count: number,
  from: number,
  spanMs: number,
): Promise<void> {
  const s = `"${store.schema}"`;
  const w = store.bucketWidthMs;
  const chunk = 1_000_000;
  // A million-row statement can outlast the store's statement timeout (30 s by default) on
  // a busy machine: the loader's connection runs without one.
  const client = await store.connection.connect();
  await client.query("SET statement_timeout = 0");
  try {
    await loadChunks(client, s, w, store.shardCount, count, from, spanMs, chunk);
  } finally {
    await client.query("RESET statement_timeout").catch(() => undefined);
    client.release();
  }
  await store.connection.query(`ANALYZE ${s}.jobs_live`);
}

async function loadChunks(
  client: pg.PoolClient,
  s: string,
  w: number,
  shardCount: number,
  count: number,
  from: number,
  spanMs: number,
  chunk: number,
): Promise<void> {
  for (let start = 0; start < count; start += chunk) {
    const n = Math.min(chunk, count - start);
    await client.query(
      `INSERT INTO ${s}.jobs_live (shard, id, tenant, key, due_at, bucket, payload, target,
         target_options, max_attempts, expire_after_ms, created_at, updated_at)
       SELECT (g % $5)::int, 'B' || lpad(g::text, 25, '0'), 'default', NULL, d, d - ((d % $4) + $4) % $4,
         '{"to":"user@example.com"}', 'noop', NULL, 3, NULL, $6, $6
       FROM generate_series($1::bigint, $1::bigint + $2::bigint - 1) AS g,
         LATERAL (SELECT $3::bigint + ((g * 7919) % $7::bigint) AS d) AS due`,
      [start, n, from, w, shardCount, Date.now(), spanMs],
    );
    process.stderr.write(
      `  loaded ${Math.min(count, start + n).toLocaleString("en-US")} backlog jobs\n`,
    );
  }
}

/**
 * Statements the server executed so far (pg_stat_statements when loaded, else
 * transactions from pg_stat_database), and what it is counting.
 */
export async function statementCount(store: PostgresStore): Promise<{ n: number; source: string }> {
  try {
    const r = await store.connection.query<{ n: number }>(
      `SELECT coalesce(sum(calls), 0)::bigint AS n FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return { n: Number(r.rows[0]!.n), source: "statements (pg_stat_statements)" };
  } catch {
    await store.connection.query("SELECT pg_stat_clear_snapshot()");
    const r = await store.connection.query<{ n: number }>(
      `SELECT (xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database
       WHERE datname = current_database()`,
    );
    return { n: Number(r.rows[0]!.n), source: "transactions (pg_stat_database)" };
  }
}

/** Total size in bytes of a table, its partitions and their indexes. */
export async function tableBytes(store: PostgresStore, table: string): Promise<number> {
  const r = await store.connection.query<{ bytes: number }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
     FROM pg_class c
     WHERE c.oid = $1::regclass
        OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass)`,
    [`"${store.schema}".${table}`],
  );
  return Number(r.rows[0]!.bytes);
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * CPU time (user + system, ms) the whole PostgreSQL server has used so far: the postmaster
 * and every live child (backends, walwriter, checkpointer, autovacuum) from /proc, plus its
 * exited children (cutime/cstime, which the postmaster reaps). Linux only; the server must
 * be on this machine (a PG_URL server on 127.0.0.1 is). A figure independent of how many
 * cores the machine has, unlike a rate.
 */
export async function pgCpuMs(store: PostgresStore): Promise<number> {
  const { rows } = await store.connection.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const postmaster = statOf(rows[0]!.pid).ppid;
  const pm = statOf(postmaster);
  let ticks = pm.utime + pm.stime + pm.cutime + pm.cstime;
  for (const child of childrenOf(postmaster)) {
    try {
      const c = statOf(child);
      ticks += c.utime + c.stime;
    } catch {
      // exited meanwhile: counted in the postmaster's cutime next time
    }
  }
  return (ticks * 1000) / CLOCK_TICKS;
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux for every architecture we run on). */
const CLOCK_TICKS =
  Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

function statOf(pid: number): {
  ppid: number;
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
} {
  const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces), from field 3 on.
  const f = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
  const n = (i: number) => Number(f[i - 3]);
  return { ppid: n(4), utime: n(14), stime: n(15), cutime: n(16), cstime: n(17) };
}

/** The store's claim of the jobs due at `t`, as the engine's watcher makes it (batch 500, lease 30 s): how many it took. */
export async function claimDueAt(store: PostgresStore, t: number): Promise<number> {
  const jobs = await store.jobsClaimDue({
    now: t,
    dueBefore: t,
    limit: 500,
    leaseMs: 30_000,
    owner: "bench",
  });
  return jobs.length;
}
