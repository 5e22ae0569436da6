import { Scheduler } from "../src/api/scheduler.js";
import type { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import { startNodeProcess, type NodeProcess, type NodeReport } from "./lib/pg-node-process.js";
import { note } from "./lib/progress.js";
import { fmt, rate, ratio, type BenchResult, type GoalRow } from "./lib/report.js";
import {
  DAY,
  benchServer,
  benchStore,
  dropStore,
  loadBacklog,
  type PgSizes,
} from "./postgres-common.js";

/**
 * Issue 13 §4 on PostgreSQL: what a paused tenant costs, as bench/paused-idle.ts measures it
 * on SQLite. Two schemas on one server, each with the same `pausedJobs` pending jobs of the
 * default tenant (due 2 to 32 days ahead); on one the tenant is paused (Scheduler.pause({
 * scope: { tenant: true } }) and runPauseWork: every job moved into jobs_held). One node
 * process on each (bench/postgres-node.ts: createScheduler with every default, shard
 * leases and partition maintenance from the store), both started together, idle side by
 * side for `pausedIdleWindowMs` from `pausedIdleWarmupMs` after their start: the
 * statements and transactions each node's clients sent (lib/pg-transactions.ts) and each
 * node's CPU time, per minute, the paused node's beside the other's.
 */
export async function pgPausedIdle(sizes: PgSizes): Promise<BenchResult> {
  const n = sizes.pausedJobs;
  const url = (await benchServer()).url;
  // due 2 to 32 days ahead: partitions for 33 days, as a node's maintenance would make them
  const plain = await benchStore("pidle_plain", 33);
  const paused = await benchStore("pidle_paused", 33);
  const nodes: NodeProcess[] = [];
  try {
    const from = Date.now() + 2 * DAY;
    note(`paused-idle: loading ${n.toLocaleString("en-US")} jobs into each of two schemas`);
    await loadBacklog(plain, n, from, 30 * DAY);
    await loadBacklog(paused, n, from, 30 * DAY);
    const hold = await pauseTenant(paused, n);
    // the hold's dead rows and both backlogs' statistics: autovacuum's one-off work stays
    // out of the window (it is the server's, not the nodes', but it shares the cores)
    await plain.connection.query("VACUUM ANALYZE");
    const started = await Promise.allSettled([
      startNodeProcess(url, plain.schema, "plain-node"),
      startNodeProcess(url, paused.schema, "paused-node"),
    ]);
    for (const s of started) if (s.status === "fulfilled") nodes.push(s.value);
    for (const s of started) if (s.status === "rejected") throw s.reason;
    await Promise.all(nodes.map((nd) => nd.ask("start")));
    const startedAt = performance.now();
    note(
      `paused-idle: two nodes idle for ${sizes.pausedIdleWindowMs / 1000} s from ${sizes.pausedIdleWarmupMs / 1000} s after their start`,
    );
    await sleepUntil(startedAt + sizes.pausedIdleWarmupMs);
    const before = await Promise.all(nodes.map((nd) => nd.ask("report")));
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, sizes.pausedIdleWindowMs));
    const after = await Promise.all(nodes.map((nd) => nd.ask("report")));
    const minutes = (performance.now() - t0) / 60_000;
    const perMin = (i: number): PerMinute => perMinute(before[i]!, after[i]!, minutes);
    const counts = await Promise.all([heldAndPending(plain), heldAndPending(paused)]);
    if (counts[1].held !== n || counts[0].held !== 0 || counts[0].pending !== n) {
      throw new Error(
        `paused-idle: ${counts[1].held} held on the paused schema (expected ${n}), ` +
          `${counts[0].held} held and ${counts[0].pending} pending on the other`,
      );
    }
    const statements = statementRows(before, after, minutes);
    return report(sizes, perMin(0), perMin(1), hold, minutes, statements);
  } finally {
    await Promise.all(nodes.map((nd) => nd.stop()));
    await dropStore(plain);
    await dropStore(paused);
  }
}

interface PerMinute {
  readonly statements: number;
  readonly transactions: number;
  readonly connections: number;
  readonly cpuMs: number;
}

function perMinute(a: NodeReport, b: NodeReport, minutes: number): PerMinute {
  return {
    statements: (b.statements - a.statements) / minutes,
    transactions: (b.transactions - a.transactions) / minutes,
    connections: (b.connections - a.connections) / minutes,
    cpuMs: (b.cpuMs - a.cpuMs) / minutes,
  };
}

/** Per minute by statement over the window: [statement, plain node's, paused node's]. */
function statementRows(
  before: readonly NodeReport[],
  after: readonly NodeReport[],
  minutes: number,
): string[][] {
  const delta = (i: number) => {
    const from = new Map(before[i]!.byStatement);
    return new Map(after[i]!.byStatement.map(([q, n]) => [q, n - (from.get(q) ?? 0)]));
  };
  const [plain, paused] = [delta(0), delta(1)];
  return [...new Set([...plain.keys(), ...paused.keys()])]
    .map((q) => [q, (plain.get(q) ?? 0) / minutes, (paused.get(q) ?? 0) / minutes] as const)
    .filter(([, a, b]) => a > 0 || b > 0)
    .sort((x, y) => y[1] + y[2] - (x[1] + x[2]))
    .map(([q, a, b]) => [`\`${q}\``, fmt(a, 1), fmt(b, 1)]);
}

/** Pauses the schema's default tenant and holds every job; the time taken and the count held. */
async function pauseTenant(store: PostgresStore, n: number): Promise<{ ms: number; held: number }> {
  const scheduler = new Scheduler({ store });
  note(`paused-idle: pausing the tenant's ${n.toLocaleString("en-US")} jobs`);
  const t = performance.now();
  const pause = await scheduler.pause({ scope: { tenant: true } });
  // runPauseWork waits for pause()'s background pass where the two meet on the pause's row
  await scheduler.runPauseWork();
  const done = await scheduler.getPause(pause.id);
  if (!done?.holdComplete)
    throw new Error(`paused-idle: the hold was not done: ${JSON.stringify(done)}`);
  return { ms: performance.now() - t, held: done.heldJobs };
}

async function heldAndPending(store: PostgresStore): Promise<{ held: number; pending: number }> {
  const stats = await new Scheduler({ store }).stats();
  return { held: stats.paused.jobs, pending: stats.counts.pending };
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, at - performance.now())));
}

function report(
  sizes: PgSizes,
  base: PerMinute,
  held: PerMinute,
  hold: { ms: number; held: number },
  minutes: number,
  statements: string[][],
): BenchResult {
  const jobs = sizes.pausedJobs.toLocaleString("en-US");
  // A window inside the first lease and shorter than the periodic work is a smoke run: its
  // ratios are printed, not judged (see the note below).
  const judged = sizes.pausedIdleWarmupMs >= 16_000;
  const row = (metric: string, k: keyof PerMinute, goal: string, met: boolean | null): GoalRow => {
    const pass = judged ? met : null;
    const unit = k === "cpuMs" ? " ms" : "";
    return {
      metric: `${metric}, tenant paused with ${jobs} held`,
      value: `${fmt(held[k], 1)}${unit}`,
      goal: judged || met === null ? goal : `${goal} (smoke run: not judged)`,
      baseline: `${fmt(base[k], 1)}${unit}`,
      ratio: ratio(held[k], base[k]),
      pass,
    };
  };
  return {
    name: "postgres-paused-idle",
    title: `PostgreSQL paused tenant: ${jobs} held jobs, a node with defaults otherwise idle for ${sizes.pausedIdleWindowMs / 1000} s`,
    goals: [
      row(
        "node's statements per minute",
        "statements",
        "<= 1.1x of no pause",
        held.statements <= 1.1 * base.statements,
      ),
      row(
        "node's transactions per minute",
        "transactions",
        "<= 1.1x of no pause",
        held.transactions <= 1.1 * base.transactions,
      ),
      row("node's CPU ms per minute", "cpuMs", "< 600 ms (1 % of a core)", held.cpuMs < 600),
      row("connections opened per minute", "connections", "-", null),
      {
        metric: `holding the ${jobs} jobs (pause + runPauseWork), jobs/s`,
        value: rate(hold.held / (hold.ms / 1000)),
        goal: "-",
        baseline: "-",
        ratio: "-",
        pass: null,
      },
    ],
    details: [
      {
        title: "#### Statements per minute over the window, by statement (first 60 characters)",
        headers: ["statement", "not paused", "paused"],
        rows: statements,
      },
    ],
    notes: [
      `baseline: a node on a second schema of the same server with the same ${jobs} pending jobs and no pause, started with the paused one and counted over the same ${fmt(minutes * 60, 1)} s`,
      "statements and transactions counted at each node's node-postgres clients (each statement; each connection's start-up, each statement outside BEGIN ... COMMIT and each such block as a transaction); CPU is process.cpuUsage() of each node process",
      ...(sizes.pausedIdleWarmupMs < 16_000
        ? [
            `counted from ${sizes.pausedIdleWarmupMs / 1000} s after the start, inside the nodes' first lease (15 s, when a node looks for a predecessor's claims every second), and over less than the 30-60 s of the periodic work: a smoke figure; the medium and full runs count 60 s from 17 s`,
          ]
        : []),
      `held ${hold.held.toLocaleString("en-US")} in ${fmt(hold.ms / 1000, 2)} s`,
    ],
  };
}
