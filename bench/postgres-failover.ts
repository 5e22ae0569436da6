/**
 * `npm run chaos:failover`: a PostgreSQL primary SIGKILLed under three firing `duetime serve`
 * processes and its streaming standby promoted, with synchronous and then asynchronous
 * replication (BENCH_SCALE=tiny: a smaller, shorter run).
 *
 * On loopback (test/support/postgres-standby.ts): three serve processes (dist/, built by the
 * npm script) on the two-host URL with target_session_attrs=read-write deliver webhook jobs
 * to a receiver that records every delivery (job id, attempt, arrival time). 24,000 jobs
 * are created through the library before the run, due evenly over 90 s; during it writers
 * keep creating through the HTTP API (POST /v1/jobs/batch, 20 a request), each job due 3-6 s
 * later, and only those answered 201 count. 40% into the window the primary and its backends are SIGKILLed;
 * the standby's tables are read (a hot standby answers reads) to know what was in flight;
 * 2 s after the kill it is promoted (`pg_ctl promote`). The run waits until the promoted
 * server has nothing claimed and nothing due, then counts: acknowledged jobs never delivered
 * (lost), deliveries before their due time, jobs delivered twice and whether they were in
 * flight at the kill, and the time from the promotion to the next delivery. It prints one
 * table and exits 1 when a check fails (docs/operations-postgres.md, "A synchronous standby").
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createApiKey, openKeyStore } from "../src/service/keys.js";
import { startPostgresPair, type PostgresPair } from "../test/support/postgres-standby.js";
import { createJobs, ms, Receiver, ServeProcess, sleepUntil, spread } from "./chaos-common.js";
import { drained, standbyView } from "./lib/failover-db.js";
import {
  failoverChecks,
  failoverFigures,
  STEADY_AFTER_MS,
  type Acked,
  type Check,
  type FailoverFigures,
} from "./lib/failover-figures.js";
import { HttpCreates } from "./lib/http-creates.js";
import { renderTable } from "./lib/report.js";

const tiny = process.env.BENCH_SCALE === "tiny";
const SIZES = tiny
  ? { jobs: 1200, windowMs: 12_000, everyMs: 100, leadMs: 1500, promoteAfterMs: 1000 }
  : { jobs: 24_000, windowMs: 90_000, everyMs: 45, leadMs: 3000, promoteAfterMs: 2000 };
const WRITERS = 3;
/** Jobs per HTTP create request (POST /v1/jobs/batch). */
const HTTP_BATCH = 20;
const NODES = ["node-1", "node-2", "node-3"];
const SCHEMA = "failover";
/** The store's default shard count (the schema is created with it). */
const SHARDS = 64;
const TENANT = "failover";
/** The kill comes this far into the window. */
const KILL_AT = 0.4;
/** Node logs go here when set (FAILOVER_LOG_DIR=/tmp/x: one file per node and run). */
const LOG_DIR = process.env.FAILOVER_LOG_DIR;

interface Run {
  readonly synchronous: boolean;
  readonly figures: FailoverFigures;
  readonly checks: Check[];
  readonly killedAt: number;
  readonly killToPromotedMs: number;
  readonly tookMs: number;
}

async function apiKey(db: string): Promise<string> {
  const keys = await openKeyStore(db);
  try {
    return (await createApiKey(keys, TENANT)).key;
  } finally {
    await keys.close();
  }
}

/** The three serve processes on the two-host URL, started together. */
function startNodes(db: string, mode: string): Promise<ServeProcess[]> {
  return Promise.all(
    NODES.map((name) => {
      const logTo = LOG_DIR === undefined ? undefined : join(LOG_DIR, `${mode}-${name}.log`);
      if (logTo) rmSync(logTo, { force: true });
      const logLevel = LOG_DIR === undefined ? "error" : "warn";
      return ServeProcess.start({ db, nodeName: name, logLevel, logTo });
    }),
  );
}

/** The jobs created through the library before the run, due evenly over the window. */
async function createBefore(
  db: string,
  target: string,
): Promise<{ acked: Acked[]; start: number }> {
  // Creating 24,000 jobs takes a few seconds, more on a busy machine: they must not be due yet.
  const start = Date.now() + 2000 + Math.ceil(SIZES.jobs / 2);
  const due = spread(SIZES.jobs, start, SIZES.windowMs);
  const ids = await createJobs(db, TENANT, target, due);
  const ackedAt = Date.now();
  return { acked: ids.map((id, i) => ({ id, dueAt: due[i]!, ackedAt, via: "library" })), start };
}

/**
 * SIGKILLs the primary at `at`, reads what the standby holds, and promotes it
 * `promoteAfterMs` after the kill (or once the read is done, if later).
 */
async function failover(pair: PostgresPair, at: number, mode: string) {
  await sleepUntil(at);
  const killedAt = Date.now();
  await pair.killPrimary();
  const atKill = await standbyView(pair.standby.url, SCHEMA);
  progress(`${mode}: primary killed; ${atKill.claimed.size} jobs claimed on the standby`);
  await sleepUntil(killedAt + SIZES.promoteAfterMs);
  await pair.promote();
  const promotedAt = Date.now();
  progress(`${mode}: standby promoted ${promotedAt - killedAt} ms after the kill`);
  return { killedAt, promotedAt, atKill };
}

async function once(synchronous: boolean): Promise<Run> {
  const began = Date.now();
  const mode = synchronous ? "sync" : "async";
  const pair = await startPostgresPair({ synchronous });
  const db = `${pair.url}&schema=${SCHEMA}`;
  const receiver = await Receiver.start();
  const nodes: ServeProcess[] = [];
  try {
    const key = await apiKey(db);
    nodes.push(...(await startNodes(db, mode)));
    const { acked, start } = await createBefore(db, receiver.url);
    const end = start + SIZES.windowMs;
    progress(
      `${mode}: 3 nodes up, ${acked.length} jobs created, first due in ${start - Date.now()} ms`,
    );
    const http = new HttpCreates({
      nodes: nodes.map((n) => n.url),
      apiKey: key,
      target: receiver.url,
      writers: WRITERS,
      batch: HTTP_BATCH,
      everyMs: SIZES.everyMs,
      leadMs: SIZES.leadMs,
      dueBy: end,
    });
    const { killedAt, promotedAt, atKill } = await failover(
      pair,
      start + SIZES.windowMs * KILL_AT,
      mode,
    );
    await http.stop();
    acked.push(...http.acked.map((a) => ({ ...a, via: "http" as const })));
    // Claims lost with the primary come back when their leases (15 s) run out.
    const settled = await waitUntilAsync(
      () => drained(pair.standby.url, SCHEMA, end),
      end + 60_000,
    );
    progress(
      `${mode}: ${settled ? "drained" : "not drained"} ${Date.now() - promotedAt} ms after the promotion`,
    );
    // A delivery that started just before the check reaches the receiver within moments.
    await new Promise((r) => setTimeout(r, 500));
    await Promise.all(nodes.splice(0).map((n) => n.kill("SIGTERM")));
    const figures = failoverFigures({
      acked,
      httpFailed: http.failed,
      arrivals: receiver.arrivals,
      killedAt,
      promotedAt,
      atKill,
      shardCount: SHARDS,
    });
    const checks = [
      ...failoverChecks(figures, synchronous),
      { what: "the promoted server drained within 60 s of the window's end", held: settled },
      { what: "the standby replayed what it received", held: atKill.caughtUp },
    ];
    const killToPromotedMs = promotedAt - killedAt;
    return { synchronous, figures, checks, killedAt, killToPromotedMs, tookMs: Date.now() - began };
  } finally {
    await Promise.all(nodes.map((n) => n.kill("SIGKILL")));
    await receiver.close();
    await pair.stop();
  }
}

function progress(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

/** Polls `cond` every 250 ms until it holds (true) or `deadline` (epoch ms) passes (false). */
async function waitUntilAsync(cond: () => Promise<boolean>, deadline: number): Promise<boolean> {
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * When lost jobs were acknowledged, against the SIGKILL (sent at `killedAt`; a commit
 * acknowledged a little after it was made before the primary died).
 */
function ackedWhen(lost: readonly Acked[], killedAt: number): string {
  const http = lost.filter((l) => l.via === "http").map((l) => l.ackedAt - killedAt);
  if (http.length === 0) return lost.length === 0 ? "-" : `${lost.length} created before the run`;
  const at = (d: number): string => (d < 0 ? `${-d} ms before` : `${d} ms after`);
  return `${at(Math.min(...http))} to ${at(Math.max(...http))} the SIGKILL`;
}

function rowsOf(runs: readonly Run[]): string[][] {
  const col = (f: (r: Run) => string): string[] => runs.map(f);
  const fig = (r: Run): FailoverFigures => r.figures;
  return [
    [
      "jobs acknowledged (library before the run + HTTP 201 during it)",
      ...col(
        (r) =>
          `${fig(r).acked.library + fig(r).acked.http} (${fig(r).acked.library} + ${fig(r).acked.http})`,
      ),
    ],
    [
      "HTTP-created jobs not acknowledged (refused or failed, not counted)",
      ...col((r) => String(fig(r).acked.httpFailed)),
    ],
    ["acknowledged and delivered", ...col((r) => String(fig(r).delivered))],
    ["acknowledged, never delivered (lost)", ...col((r) => String(fig(r).lost.length))],
    ["lost: acknowledged when", ...col((r) => ackedWhen(fig(r).lost, r.killedAt))],
    [
      "acknowledged before the kill, missing on the standby",
      ...col((r) => String(fig(r).missingOnStandby.length)),
    ],
    ["delivered before their due time", ...col((r) => String(fig(r).early))],
    [
      "claimed on the standby at the kill (in flight)",
      ...col((r) => String(fig(r).inFlightAtKill)),
    ],
    ["jobs delivered twice", ...col((r) => String(fig(r).duplicates.total))],
    [
      "  of them claimed on the standby at the kill",
      ...col((r) => String(fig(r).duplicates.claimedAtKill)),
    ],
    [
      "  of them pending on the standby: claim lost with the primary",
      ...col((r) => String(fig(r).duplicates.claimLost)),
    ],
    ["  of them not in flight", ...col((r) => String(fig(r).duplicates.other))],
    [
      "  of them repeated with a higher attempt number",
      ...col((r) => String(fig(r).duplicates.laterAttempt)),
    ],
    ["delivered, create not acknowledged", ...col((r) => String(fig(r).unacknowledgedDelivered))],
    ["kill to promotion", ...col((r) => ms(r.killToPromotedMs))],
    ["promotion to the next delivery", ...col((r) => ms(fig(r).resumeMs))],
    ["promotion to every shard delivering again", ...col((r) => ms(fig(r).allShardsResumedMs))],
    [
      "jobs due between kill and promotion: all delivered, after the promotion",
      ...col((r) => `${fig(r).outage.due} jobs: ${ms(fig(r).outage.allDeliveredAfterPromotionMs)}`),
    ],
    [
      "lateness p50 / p99 / max, all delivered jobs",
      ...col(
        (r) =>
          `${ms(fig(r).lateness.p50)} / ${ms(fig(r).lateness.p99)} / ${ms(fig(r).lateness.max)}`,
      ),
    ],
    [
      `lateness p99, jobs due from ${STEADY_AFTER_MS / 1000} s after the promotion`,
      ...col((r) => ms(fig(r).lateness.steadyP99)),
    ],
    ["run took", ...col((r) => ms(r.tookMs))],
  ];
}

const runs: Run[] = [];
for (const synchronous of [true, false]) runs.push(await once(synchronous));
const title =
  `PostgreSQL failover under 3 serve nodes (scale ${tiny ? "tiny" : "full"}): ` +
  `${SIZES.jobs} webhook jobs due over ${SIZES.windowMs / 1000} s plus HTTP creates; ` +
  `primary SIGKILLed ${KILL_AT * 100}% in, standby promoted ${SIZES.promoteAfterMs / 1000} s later`;
process.stdout.write(
  `${renderTable({ title, headers: ["measure", "synchronous", "asynchronous"], rows: rowsOf(runs) })}\n\n`,
);
let failed = 0;
for (const r of runs) {
  for (const c of r.checks) {
    const mode = r.synchronous ? "synchronous" : "asynchronous";
    process.stdout.write(`${c.held ? "PASS" : "FAIL"} ${mode}: ${c.what}\n`);
    if (!c.held) failed++;
  }
}
process.exitCode = failed > 0 ? 1 : 0;
