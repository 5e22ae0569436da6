import { Scheduler } from "../src/api/scheduler.js";
import type { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import { fmt, ratio, type BenchResult } from "./lib/report.js";
import { median } from "./lib/stats.js";
import { benchStore, claimDueAt, dropStore, jobFactory, type PgSizes } from "./postgres-common.js";

/**
 * Issue 13 §4 on PostgreSQL: what the claim's pause probe costs. The claim statement asks
 * whether any pause is open (an EXISTS on the partial index pauses_open); only when one is
 * does the node match each claimed job against it. Two schemas on one server: one with no
 * pause, one with an active pause made through Scheduler.pause on a target none of the
 * jobs have (so the claim still takes every job, and pays the probe and the matching). In
 * alternating rounds, `DUE` due jobs are written to each and claimed by the store's
 * jobsClaimDue, as the engine's watcher claims them.
 */
const DUE = 100;

export async function pgPauseCost(sizes: PgSizes): Promise<BenchResult> {
  const plain = await benchStore("pause0");
  const paused = await benchStore("pause1");
  const times: Record<"plain" | "paused", number[]> = { plain: [], paused: [] };
  try {
    const scheduler = new Scheduler({ store: paused });
    await scheduler.pause({ scope: { target: "elsewhere" } });
    await scheduler.runPauseWork();
    const make = jobFactory();
    const base = Date.now();
    for (let r = 0; r < sizes.claimRounds + 2; r++) {
      const order = r % 2 === 0 ? (["plain", "paused"] as const) : (["paused", "plain"] as const);
      for (const [k, way] of order.entries()) {
        const store = way === "plain" ? plain : paused;
        const t = base + r * 100 + k * 10;
        await store.jobsInsert({
          jobs: Array.from({ length: DUE }, (_, i) => make(t - 1000 + i)),
          now: t,
        });
        const s = performance.now();
        const got = await claimDueAt(store, t);
        if (r >= 2) times[way].push(performance.now() - s); // two rounds warm up
        if (got !== DUE) throw new Error(`pause-cost ${way}: claimed ${got}, expected ${DUE}`);
      }
    }
    const plan = await probePlan(paused);
    const a = median(times.paused);
    const b = median(times.plain);
    return {
      name: "postgres-pause-cost",
      title: `PostgreSQL claim's pause probe: ${DUE} due jobs claimed with 0 and 1 active pause`,
      goals: [
        {
          metric: `jobsClaimDue of ${DUE} jobs, 1 active pause (covering none of them)`,
          value: `${fmt(a)} ms`,
          goal: "<= 1.1x of no pause",
          baseline: `${fmt(b)} ms`,
          ratio: ratio(a, b),
          pass: a <= 1.1 * b,
        },
      ],
      details: [
        {
          title: "The probe's plan (EXPLAIN of the claim's EXISTS on pauses, 1 active pause)",
          headers: ["plan"],
          rows: plan.map((l) => [l]),
        },
      ],
      notes: [
        `median of ${sizes.claimRounds} rounds alternating the order; each claim on fresh due jobs of its own schema`,
        "the pause was made with Scheduler.pause({ scope: { target: 'elsewhere' } }) and its work run (nothing to hold)",
      ],
    };
  } finally {
    await dropStore(plain);
    await dropStore(paused);
  }
}

/** The plan of the probe as the claim writes it (the pauses_open partial index). */
async function probePlan(store: PostgresStore): Promise<string[]> {
  const sql = store.context.sql.claimDue;
  const probe = /EXISTS\s*\(\s*SELECT[^()]*FROM\s+\S*pauses[^()]*\)/i.exec(sql)?.[0];
  if (!probe) return ["(no EXISTS on pauses found in the claim statement)"];
  const r = await store.connection.query<{ "QUERY PLAN": string }>(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT ${probe}`,
  );
  return r.rows.map((row) => row["QUERY PLAN"]);
}
