/**
 * `npm run chaos`: the crash and fault runs of docs/reliability.md, against real
 * `duetime serve` processes (dist/: run `npm run build` first) delivering webhooks to a
 * loopback receiver that records every delivery. Three scenarios, each printing its counts:
 *
 *  1. SQLite: jobs due over a window, `serve` SIGKILLed and restarted at once, repeatedly;
 *     the restart (same node name) must give the dead process's claims back at once.
 *  2. PostgreSQL, three nodes: one SIGKILLed for good (its shards must be served again
 *     within 5 s), a crash-style PostgreSQL restart (immediate shutdown), and one node
 *     SIGKILLed and restarted.
 *  3. Shutdown: SIGTERM while deliveries run against a receiver slower than the stop
 *     timeout: nothing may start after the signal.
 *
 * CHAOS_SCALE=tiny runs small sizes in well under a minute; the default (full) takes a few
 * minutes. CHAOS_ONLY=sqlite|postgres|shutdown runs one scenario.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { shardOf } from "../src/core/ids.js";
import { createApiKey, openKeyStore } from "../src/service/keys.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { startPostgres } from "../test/support/postgres-server.js";
import {
  chaosSizes,
  countsOf,
  createJobs,
  firstArrivals,
  heldLateness,
  ms,
  Receiver,
  ServeProcess,
  sleepUntil,
  spread,
  waitUntil,
  type Arrival,
  type Counts,
  type Held,
} from "./chaos-common.js";
import { renderTable } from "./lib/report.js";
import { ascending, percentile } from "./lib/stats.js";

const sizes = chaosSizes();
/** Least life of a restarted process before the next SIGKILL, ms. */
const UP_MS = 3000;
const only = process.env.CHAOS_ONLY;
const dir = mkdtempSync(join(tmpdir(), "duetime-chaos-"));

/** The tenant of every chaos job: an API key makes it (and its webhook signing secret). */
const TENANT = "chaos";

async function newTenant(db: string): Promise<void> {
  const keys = await openKeyStore(db);
  try {
    await createApiKey(keys, TENANT);
  } finally {
    await keys.close();
  }
}

/** When the jobs start coming due: after their creation (tens of us each) and a margin. */
function firstDue(jobs: number): number {
  return Date.now() + 2000 + Math.ceil(jobs / 10);
}

/** Creates the jobs and says how much lead they had left (creation must end before they come due). */
async function create(db: string, target: string, due: readonly number[]): Promise<string[]> {
  const ids = await createJobs(db, TENANT, target, due);
  const lead = due[0]! - Date.now();
  console.log(`  ${ids.length} jobs created; the first comes due ${lead} ms later`);
  return ids;
}

function countRows(c: Counts): string[][] {
  return [
    ["created", String(c.created)],
    ["delivered", String(c.delivered)],
    ["lost", String(c.lost)],
    ["duplicates", String(c.duplicates)],
    ["early (delivered before due, receiver clock)", String(c.early)],
    ["lateness p50 / p99, all jobs", `${ms(c.latenessP50)} / ${ms(c.latenessP99)}`],
  ];
}

function heldRows(
  label: string,
  held: ReadonlyMap<string, Held>,
  arrivals: readonly Arrival[],
): string[][] {
  const { lateness, afterBack } = heldLateness(held, arrivals);
  return [
    [`jobs held by ${label}`, String(held.size)],
    [
      `their lateness p50 / p99 / max (the ${lateness.length} not delivered before the kill)`,
      spreadOf(lateness),
    ],
    ["the same counted from when the restarted process listened", spreadOf(afterBack)],
  ];
}

function spreadOf(sorted: readonly number[]): string {
  return `${ms(percentile(sorted, 50))} / ${ms(percentile(sorted, 99))} / ${ms(sorted[sorted.length - 1] ?? NaN)}`;
}

function print(title: string, rows: string[][]): void {
  console.log(`\n${renderTable({ title, headers: ["measure", "value"], rows })}`);
}

/** Scenario 1: SIGKILL and restart `serve` on SQLite, over and over. */
async function sqliteKills(): Promise<void> {
  const { jobs, windowMs, kills } = sizes.sqlite;
  const db = join(dir, "kills.db");
  await newTenant(db);
  const receiver = await Receiver.start();
  let serve = await ServeProcess.start({ db });
  const start = firstDue(jobs);
  const ids = await create(db, receiver.url, spread(jobs, start, windowMs));
  const held = new Map<string, Held>();
  const restartMs: number[] = [];
  let upSince = Date.now();
  for (let k = 0; k < kills; k++) {
    // On a busy machine a restart can take longer than the gap between kills: each process
    // gets at least UP_MS of life, or the run would measure only downtime.
    await sleepUntil(Math.max(start + ((k + 0.5) * windowMs) / kills, upSince + UP_MS));
    const killedAt = Date.now();
    await serve.kill("SIGKILL");
    // what the dead process held: claimed, its lease still running
    const store = new SqliteStore({ path: db, backgroundCheckpoints: false });
    const claimed = await store.jobsList({ statuses: ["claimed"], limit: 1_000_000 });
    await store.close();
    serve = await ServeProcess.start({ db });
    const backAt = Date.now();
    upSince = backAt;
    restartMs.push(backAt - killedAt);
    for (const j of claimed) if (!held.has(j.id)) held.set(j.id, { killedAt, backAt });
  }
  await sleepUntil(start + windowMs);
  await waitUntil(() => receiver.delivered().size >= ids.length, 60_000);
  await serve.kill("SIGTERM");
  await receiver.close();
  const counts = countsOf(ids, receiver.arrivals);
  print(
    `SQLite: ${jobs} jobs due over ${windowMs / 1000} s, ${kills} SIGKILLs of serve, each restarted at once`,
    [
      ...countRows(counts),
      ...heldRows("a killed process", held, receiver.arrivals),
      [
        "restart time (kill to listening), p50 / max",
        `${ms(percentile(ascending(restartMs), 50))} / ${ms(Math.max(...restartMs))}`,
      ],
    ],
  );
}

/** Scenario 2: three PostgreSQL nodes; a node killed, a crash-style restart, a node killed and restarted. */
async function postgresFaults(): Promise<void> {
  const { jobs, windowMs } = sizes.postgres;
  const server = await startPostgres();
  const schema = "chaos";
  const db = `${server.url}${server.url.includes("?") ? "&" : "?"}schema=${schema}`;
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  pool.on("error", () => {});
  try {
    await newTenant(db);
    const receiver = await Receiver.start();
    const nodes = new Map<string, ServeProcess>();
    for (const name of ["node-1", "node-2", "node-3"]) {
      nodes.set(name, await ServeProcess.start({ db, nodeName: name }));
    }
    const start = firstDue(jobs);
    const due = spread(jobs, start, windowMs);
    const ids = await create(db, receiver.url, due);
    const shardCount = (
      await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".shard_leases`)
    ).rows[0]!.n;

    // A: node-3 dies for good.
    await sleepUntil(start + windowMs * 0.25);
    const deadShards = (
      await pool.query<{ shard: number }>(
        `SELECT shard FROM "${schema}".shard_leases WHERE owner = 'node-3'`,
      )
    ).rows.map((r) => r.shard);
    const deadAt = Date.now();
    await nodes.get("node-3")!.kill("SIGKILL");
    nodes.delete("node-3");
    const deadHeld = new Set(
      (
        await pool.query<{ id: string }>(
          `SELECT id FROM "${schema}".jobs_claimed WHERE starts_with(lease_owner, 'node-3/')`,
        )
      ).rows.map((r) => r.id),
    );
    let takeoverMs = NaN;
    for (;;) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}".shard_leases
         WHERE shard = ANY($1::int[]) AND owner <> 'node-3' AND expires_at > $2::bigint`,
        [deadShards, Date.now()],
      );
      if (rows[0]!.n === deadShards.length) {
        takeoverMs = Date.now() - deadAt;
        break;
      }
      if (Date.now() - deadAt > 60_000) break;
      await new Promise((r) => setTimeout(r, 50));
    }

    // B: PostgreSQL crashes (immediate shutdown) and comes back.
    await sleepUntil(start + windowMs * 0.5);
    const crashAt = Date.now();
    await server.restart({ crash: true });
    const pgDownMs = Date.now() - crashAt;

    // C: node-1 is SIGKILLed and restarted at once (same node name).
    await sleepUntil(start + windowMs * 0.75);
    const killedAt = Date.now();
    await nodes.get("node-1")!.kill("SIGKILL");
    const heldIds = (
      await pool.query<{ id: string }>(
        `SELECT id FROM "${schema}".jobs_claimed WHERE starts_with(lease_owner, 'node-1/')`,
      )
    ).rows.map((r) => r.id);
    nodes.set("node-1", await ServeProcess.start({ db, nodeName: "node-1" }));
    const restartedAt = Date.now();
    const held = new Map(heldIds.map((id) => [id, { killedAt, backAt: restartedAt }] as const));

    await sleepUntil(start + windowMs);
    await waitUntil(() => receiver.delivered().size >= ids.length, 90_000);
    await Promise.all([...nodes.values()].map((n) => n.kill("SIGTERM")));
    await receiver.close();
    const retried = (
      await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}".jobs_history WHERE attempts > 1`,
      )
    ).rows[0]!.n;

    const counts = countsOf(ids, receiver.arrivals);
    const first = firstArrivals(receiver.arrivals);
    const dueById = new Map(ids.map((id, i) => [id, due[i]!]));
    const deadSet = new Set(deadShards);
    // Jobs of the dead node's shards due in the 10 s after its death: those it had claimed
    // (the next second's, in its timing wheel) wait for their leases; the rest are served
    // by the nodes that adopt its shards.
    const orphans = ids.filter((id) => {
      const d = dueById.get(id)!;
      return (
        deadSet.has(shardOf(id, shardCount)) &&
        d >= deadAt &&
        d < deadAt + 10_000 &&
        !deadHeld.has(id)
      );
    });
    const orphanLate = lateOf(orphans, first);
    const deadHeldLate = lateOf([...deadHeld], first);
    const afterRestart = ids.filter((id) => {
      const d = dueById.get(id)!;
      return d >= killedAt && d < killedAt + 16_000;
    });
    const restartLate = lateOf(afterRestart, first);
    print(
      `PostgreSQL: ${jobs} jobs due over ${windowMs / 1000} s on 3 nodes (${shardCount} shards)`,
      [
        ...countRows(counts),
        ["A. node-3 SIGKILLed: its shards owned by live nodes again after", ms(takeoverMs)],
        [
          `A. its shards' jobs due in the 10 s after the kill, not claimed by it (${orphans.length}): lateness p50 / p99 / max`,
          spreadOf(orphanLate),
        ],
        [
          `A. jobs it had claimed (${deadHeld.size}; back when their leases run out): lateness p50 / p99 / max`,
          spreadOf(deadHeldLate),
        ],
        ["B. crash-style PostgreSQL restart: down for", ms(pgDownMs)],
        ["jobs that took more than one attempt (all causes)", String(retried)],
        ...heldRows("node-1 when SIGKILLed (C)", held, receiver.arrivals),
        ["C. node-1 back (kill to listening)", ms(restartedAt - killedAt)],
        [
          `C. jobs due in the 16 s after the kill (${afterRestart.length}): more than 1 s late`,
          `${restartLate.filter((x) => x > 1000).length} (${((100 * restartLate.filter((x) => x > 1000).length) / Math.max(1, restartLate.length)).toFixed(1)}%)`,
        ],
      ],
    );
  } finally {
    await pool.end();
    await server.stop();
  }
}

/** Scenario 3: SIGTERM while deliveries run, the receiver slower than the stop timeout. */
async function shutdown(): Promise<void> {
  const { jobs, windowMs, receiverDelayMs } = sizes.shutdown;
  const db = join(dir, "shutdown.db");
  await newTenant(db);
  const receiver = await Receiver.start();
  receiver.delayMs = receiverDelayMs;
  const stopTimeoutMs = Math.floor(receiverDelayMs / 4);
  let serve = await ServeProcess.start({ db, concurrency: 50, stopTimeoutMs });
  const start = firstDue(jobs);
  const ids = await create(db, receiver.url, spread(jobs, start, windowMs));
  await sleepUntil(start + windowMs / 2);
  const signalAt = Date.now();
  const code = await serve.kill("SIGTERM");
  const exitedAt = Date.now();
  // Requests in flight reach the receiver within a few ms; later ones were started after it.
  const afterSignal = receiver.arrivals.filter((a) => a.at > signalAt + 20);
  const running = receiver.arrivals.filter(
    (a) => a.at <= signalAt && a.at > signalAt - receiverDelayMs,
  ).length;
  receiver.delayMs = 0;
  serve = await ServeProcess.start({ db });
  await waitUntil(() => receiver.delivered().size >= ids.length, 60_000);
  await serve.kill("SIGTERM");
  await receiver.close();
  const counts = countsOf(ids, receiver.arrivals);
  print(
    `Shutdown: ${jobs} jobs due over ${windowMs / 1000} s, receiver answers after ${receiverDelayMs} ms, SIGTERM midway with --stop-timeout ${stopTimeoutMs}`,
    [
      ...countRows(counts),
      ["deliveries running at the signal (receiver still answering)", String(running)],
      [
        "deliveries started more than 20 ms after the signal",
        `${afterSignal.length}${afterSignal.length ? ` (${offsets(afterSignal, signalAt)})` : ""}`,
      ],
      ["stop took (signal to exit), exit code", `${ms(exitedAt - signalAt)}, ${code}`],
    ],
  );
}

function lateOf(ids: readonly string[], first: ReadonlyMap<string, Arrival>): number[] {
  return ids
    .flatMap((id) => {
      const a = first.get(id);
      return a ? [a.at - a.dueAt] : [];
    })
    .sort((a, b) => a - b);
}

function offsets(arrivals: readonly Arrival[], from: number): string {
  const d = arrivals.map((a) => a.at - from).sort((a, b) => a - b);
  return `${d[0]}-${d[d.length - 1]} ms after it`;
}

const began = Date.now();
console.log(`duetime chaos run, scale ${sizes.scale}, ${new Date(began).toISOString()}`);
try {
  if (!only || only === "sqlite") await sqliteKills();
  if (!only || only === "postgres") await postgresFaults();
  if (!only || only === "shutdown") await shutdown();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\nchaos run took ${((Date.now() - began) / 1000).toFixed(0)} s`);
