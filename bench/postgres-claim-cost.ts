import { fmt, ratio, type BenchResult } from "./lib/report.js";
import { median } from "./lib/stats.js";
import { statements } from "../src/stores/postgres/statements.js";
import {
  DAY,
  benchStore,
  dropStore,
  jobFactory,
  loadBacklog,
  type PgSizes,
} from "./postgres-common.js";

const DUE = 100;

interface PlanNode {
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  Plans?: PlanNode[];
}

/**
 * Poll and claim cost against a small and a large pending future backlog (due over the
 * next 30 days): each round schedules 100 jobs due now, then times the claim of them (one
 * statement) and their settlement, and an empty poll (claim finding nothing plus
 * jobsNextDue). The buffer count (EXPLAIN ANALYZE) shows the work is the due rows', not the
 * backlog's: flat within 1.5x is the goal.
 */
export async function pgClaimCost(sizes: PgSizes): Promise<BenchResult> {
  const rows: (string | number)[][] = [];
  const claimMs: number[] = [];
  for (const backlog of sizes.claimBacklogs) {
    const store = await benchStore(`claim${backlog}`);
    try {
      const now = Date.now();
      await loadBacklog(store, backlog, now + 60_000, 30 * DAY);
      // Steady state, as a running system has it: the load's vacuum and checkpoint done
      // now, not by autovacuum in the middle of the timing.
      await store.connection.query(`VACUUM (ANALYZE) "${store.schema}".jobs_live`);
      await store.connection.query("CHECKPOINT");
      const make = jobFactory();
      const claim: number[] = [];
      const settle: number[] = [];
      const empty: number[] = [];
      for (let r = 0; r < sizes.claimRounds; r++) {
        const t = now + r; // a fresh instant per round; the backlog stays in the future
        await store.jobsInsert({
          jobs: Array.from({ length: DUE }, (_, i) => make(t - 1000 + i)),
          now: t,
        });
        let s = performance.now();
        const got = await store.jobsClaimDue({
          now: t,
          dueBefore: t,
          limit: 500,
          leaseMs: 30_000,
          owner: "bench",
        });
        claim.push(performance.now() - s);
        if (got.length !== DUE) throw new Error(`claimed ${got.length}, expected ${DUE}`);
        s = performance.now();
        await store.jobsSettle({
          now: t,
          settlements: got.map((j) => ({
            id: j.id,
            fence: j.fence,
            firedAt: t,
            outcome: "succeeded" as const,
            result: null,
          })),
        });
        settle.push(performance.now() - s);
        s = performance.now();
        await store.jobsClaimDue({
          now: t,
          dueBefore: t,
          limit: 500,
          leaseMs: 30_000,
          owner: "bench",
        });
        await store.jobsNextDue({ now: t });
        empty.push(performance.now() - s);
      }
      // buffers touched by one claim of 100 due jobs
      await store.jobsInsert({
        jobs: Array.from({ length: DUE }, (_, i) => make(now + 5000 + i)),
        now,
      });
      const sql = statements(store.schema).claimDue;
      const plan = await store.connection.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
        [now + 6000, 500, "bench", now + 6000, null, 30_000],
      );
      const top = plan.rows[0]!["QUERY PLAN"][0].Plan;
      const buffers = (top["Shared Hit Blocks"] ?? 0) + (top["Shared Read Blocks"] ?? 0);
      claimMs.push(median(claim));
      rows.push([
        backlog.toLocaleString("en-US"),
        fmt(median(claim)),
        fmt(median(settle)),
        fmt(median(empty)),
        buffers,
      ]);
    } finally {
      await dropStore(store);
    }
  }
  const [small, large] = [claimMs[0]!, claimMs[1]!];
  return {
    name: "postgres-claim-cost",
    title: `PostgreSQL poll and claim cost: ${DUE} due jobs on a ${sizes.claimBacklogs.map((b) => b.toLocaleString("en-US")).join(" vs ")} future backlog`,
    goals: [
      {
        metric: "claim of 100 due jobs, large / small backlog (median ms)",
        value: `${fmt(large)} ms vs ${fmt(small)} ms`,
        goal: "<= 1.5x",
        baseline: `${fmt(small)} ms`,
        ratio: ratio(large, small),
        pass: large <= 1.5 * small,
      },
    ],
    details: [
      {
        title: "#### Median per round",
        headers: [
          "pending backlog",
          "claim 100 (ms)",
          "settle 100 (ms)",
          "empty poll (ms)",
          "claim buffers",
        ],
        rows,
      },
    ],
    notes: [
      "claim: one statement (due prefix of index (due_at, id), FOR UPDATE SKIP LOCKED, delete by TID, insert into jobs_claimed)",
      "empty poll: a claim finding nothing due plus jobsNextDue (counters, then one partition's index)",
    ],
  };
}
