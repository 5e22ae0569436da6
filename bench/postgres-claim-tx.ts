import type { NewJob } from "../src/core/job.js";
import { occurrenceJob, type Schedule } from "../src/core/series.js";
import { inTransaction } from "../src/stores/postgres/connection.js";
import type { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import { byDue, rowToJob, type JobRow } from "../src/stores/postgres/rows.js";
import { fmt, ratio, type BenchResult } from "./lib/report.js";
import { dailySeries } from "../test/support/series.js";
import { median } from "./lib/stats.js";
import { benchStore, claimDueAt, dropStore, jobFactory, type PgSizes } from "./postgres-common.js";

/**
 * What the PostgreSQL claim's transaction costs (issue 12 §3): the claim and the series step
 * of the occurrences it holds are one transaction (claim.ts), so every claim pays BEGIN and
 * COMMIT on a checked-out client even when it holds no occurrence. In rounds, alternating
 * the order, `DUE` due jobs are claimed four ways: the claim statement alone on the pool
 * (autocommit), the same statement between BEGIN and COMMIT on a pooled client, the store's
 * jobsClaimDue of one-shot jobs, and the store's jobsClaimDue of as many series occurrences
 * (each series read locked, advanced, its next occurrence inserted). Each path decodes the
 * rows as the store does (rowToJob).
 */
const DUE = 100;
type Mode = "autocommit" | "begin-commit" | "store one-shot" | "store occurrences";
const MODES: readonly Mode[] = [
  "autocommit",
  "begin-commit",
  "store one-shot",
  "store occurrences",
];

export async function pgClaimTx(sizes: PgSizes): Promise<BenchResult> {
  const store = await benchStore("claimtx");
  const times = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
  try {
    const make = jobFactory();
    const base = Date.now();
    for (let r = 0; r < sizes.claimRounds + 2; r++) {
      const order = r % 2 === 0 ? MODES : [...MODES].reverse();
      for (const [k, mode] of order.entries()) {
        const t = base + r * 100 + k * 10; // a fresh instant per claim
        await writeDue(store, mode, t, make);
        const s = performance.now();
        const got = await claimWay(store, mode, t);
        // the first two rounds warm the statements and the JIT
        if (r >= 2) times.get(mode)!.push(performance.now() - s);
        if (got !== DUE) throw new Error(`${mode}: claimed ${got}, expected ${DUE}`);
      }
    }
  } finally {
    await dropStore(store);
  }
  const m = (mode: Mode): number => median(times.get(mode)!);
  const auto = m("autocommit");
  const row = (mode: Mode) => [mode, fmt(m(mode)), ratio(m(mode), auto)];
  return {
    name: "postgres-claim-tx",
    title: `PostgreSQL claim's transaction: ${DUE} due jobs claimed with and without BEGIN/COMMIT, and with series occurrences`,
    goals: [
      {
        metric: "claim of one-shot jobs: store (in its transaction) vs the statement alone",
        value: `${fmt(m("store one-shot"))} ms`,
        goal: "-",
        baseline: `${fmt(auto)} ms`,
        ratio: ratio(m("store one-shot"), auto),
        pass: null,
      },
    ],
    details: [
      {
        title: `Claim of ${DUE} due jobs, median ms of ${sizes.claimRounds} rounds`,
        headers: ["way", "ms", "vs autocommit"],
        rows: MODES.map(row),
      },
    ],
    notes: [
      "autocommit: pool.query of the store's claim statement; begin-commit: the same between BEGIN and COMMIT on a checked-out client (inTransaction); the store's ways add its series step (nothing to do for one-shot jobs)",
      "PostgreSQL with fsync and synchronous_commit on",
    ],
  };
}

async function writeDue(
  store: PostgresStore,
  mode: Mode,
  t: number,
  make: (dueAt: number) => NewJob,
): Promise<void> {
  if (mode !== "store occurrences") {
    await store.jobsInsert({
      jobs: Array.from({ length: DUE }, (_, i) => make(t - 1000 + i)),
      now: t,
    });
    return;
  }
  for (let i = 0; i < DUE; i++) {
    const job = make(t - 1000 + i);
    const s = dailySeries(job.id + "s", t, { tenant: "default", template: { target: "noop" } });
    const key = "2026-01-01T09:00:00";
    const o = { at: job.dueAt, nominal: key, key, mapping: "exact" as const };
    const occurrence = occurrenceJob(s, o, job.id);
    const schedule: Schedule = { ...s, nextJobId: job.id, nextAt: job.dueAt, nextNominal: key };
    await store.schedulesInsert({ schedule, job: occurrence, now: t });
  }
}

async function claimWay(store: PostgresStore, mode: Mode, t: number): Promise<number> {
  const params = [t, 500, "bench", t, null, 30_000];
  const sql = store.context.sql.claimDue;
  if (mode === "autocommit") {
    const { rows } = await store.connection.query<JobRow>(sql, params);
    return rows.map(rowToJob).sort(byDue).length;
  }
  if (mode === "begin-commit") {
    const jobs = await inTransaction(store.connection, async (c) =>
      (await c.query<JobRow>(sql, params)).rows.map(rowToJob).sort(byDue),
    );
    return jobs.length;
  }
  return claimDueAt(store, t);
}
