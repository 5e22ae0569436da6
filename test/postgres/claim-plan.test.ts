import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { statements } from "../../src/stores/postgres/statements.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
  [k: string]: unknown;
}

function walk(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  out.push(node);
  for (const child of node.Plans ?? []) walk(child, out);
  return out;
}

/**
 * The claim's plan on a large future backlog: no sequential scan anywhere, and the only
 * live partitions read are those that can hold due rows (starting at or before dueBefore)
 * and the default one (read by its due-time index).
 */
const pg = usePostgresServer();

describe("postgres claim plan", () => {
  let store: PostgresStore;

  beforeAll(async () => {
    store = await PostgresStore.open({ url: pg.url, schema: freshSchema("plan") });
    const newId = createIdGenerator(() => NOW);
    const batch: NewJob[] = [];
    const flush = async () => {
      await store.jobsInsert({ jobs: batch.splice(0), now: NOW });
    };
    // 200,000 jobs over the next 60 days, 2,000 far beyond the partitioned range (default
    // partition), and 20,000 overdue in yesterday's bucket (a catch-up after downtime).
    for (let i = 0; i < 222_000; i++) {
      const dueAt =
        i < 200_000
          ? NOW + 60_000 + Math.floor((i * 7919) % (60 * 24 * 60)) * 60_000
          : i < 202_000
            ? NOW + 800 * DAY + i
            : NOW - DAY + (i - 202_000) * 1000;
      batch.push({
        id: newId(),
        tenant: "default",
        key: null,
        dueAt,
        payload: { i },
        target: "t",
        targetOptions: null,
        maxAttempts: 3,
        expireAfterMs: null,
      });
      if (batch.length === 10_000) await flush();
    }
    await flush();
    await store.connection.query(`ANALYZE "${store.schema}".jobs_live`);
  }, 180_000);

  afterAll(async () => {
    await store?.close();
  });

  async function plan(
    shards: number[] | null,
    which: "claimDue" | "claimDueAlone",
  ): Promise<PlanNode> {
    const sql = statements(store.schema)[which];
    const { rows } = await store.connection.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `EXPLAIN (FORMAT JSON) ${sql}`,
      [NOW, 100, "node-a", NOW, shards, 30_000],
    );
    return rows[0]!["QUERY PLAN"][0].Plan;
  }

  it("has many partitions to prune", async () => {
    const parts = await store.partitions.list("jobs_live");
    expect(parts.length).toBeGreaterThanOrEqual(60);
  });

  for (const [shards, which] of [
    [null, "claimDue"],
    [[0, 1, 2, 3], "claimDue"],
    [null, "claimDueAlone"],
    [[0, 1, 2, 3], "claimDueAlone"],
  ] as const) {
    it(`${which} reads only partitions that can hold due jobs, by index (shards ${JSON.stringify(shards)})`, async () => {
      const top = await plan(shards === null ? null : [...shards], which);
      if (process.env.SHOW_PLAN) console.log(JSON.stringify(top, null, 1));
      const nodes = walk(top);
      const scans = nodes.filter(
        (n) => n["Relation Name"] !== undefined && n["Node Type"].endsWith("Scan"),
      );
      // The job tables are read by index only. The claim's probe of the open pauses (one
      // EXISTS on the small pauses table, statements.ts ANY_PAUSED) may be a sequential scan
      // of its page or two, as the planner prefers for a table that size.
      const seq = scans.filter((n) => n["Node Type"] === "Seq Scan");
      expect(seq.map((n) => n["Relation Name"]).filter((r) => r !== "pauses")).toEqual([]);
      expect(scans.some((n) => n["Relation Name"]!.startsWith("jobs_live"))).toBe(true);
      const live = scans.map((n) => n["Relation Name"]!).filter((r) => r.startsWith("jobs_live"));
      const allowed = (r: string) => {
        if (r === "jobs_live_default") return true;
        const m = /^jobs_live_p(\d+)$/.exec(r);
        return m !== null && Number(m[1]) <= NOW;
      };
      expect(live.filter((r) => !allowed(r))).toEqual([]);
      // yesterday's and today's partitions (and the default one), each read at most twice
      // (select and delete): nothing of the 60 future days.
      expect(new Set(live).size).toBeLessThanOrEqual(3);
    });
  }

  it("claims the overdue jobs first and nothing of the future", async () => {
    const got = await store.jobsClaimDue({
      now: NOW,
      dueBefore: NOW,
      limit: 1000,
      leaseMs: 30_000,
      owner: "n",
    });
    expect(got.length).toBe(1000);
    expect(got[0]!.dueAt).toBe(NOW - DAY);
    expect(got.every((j) => j.dueAt <= NOW)).toBe(true);
  });
});
