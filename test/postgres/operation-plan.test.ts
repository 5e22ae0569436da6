import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import { bucketOf } from "../../src/core/buckets.js";
import { COLS } from "../../src/stores/postgres/job-columns.js";
import { operationStatements } from "../../src/stores/postgres/operation-statements.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  out.push(node);
  for (const child of node.Plans ?? []) walk(child, out);
  return out;
}

/**
 * A bulk batch's set statements (operation-statements.ts cancel and erase) reach each job's
 * rows by index, one probe per job, on an analysed backlog: no sequential scan reads a row.
 * The join they were before was planned as a hash join over a Seq Scan of every jobs_live
 * partition (an erase of 100 tagged jobs read all 60,000 of a backlog; bench/postgres-bulk-
 * erase.ts at medium: 975 jobs/s erased beside 1M jobs before, 5,815/s after).
 */
const server = usePostgresServer();

describe("postgres bulk batch plans", () => {
  let store: PostgresStore;
  type Picked = { shard: number; id: string; dueAt: number };
  const tagged: Picked[] = [];
  /** 100 dead jobs (tag retry:me) beside 10,000 succeeded ones in jobs_history. */
  const dead: Picked[] = [];

  beforeAll(async () => {
    store = await PostgresStore.open({ url: server.url, schema: freshSchema("opplan") });
    const newId = createIdGenerator(() => NOW);
    const job = (i: number, tags: string[]): NewJob => ({
      id: newId(),
      tenant: "acme",
      key: i % 3 === 0 ? `k${i}` : null,
      // spread evenly over 10 daily partitions, about 2,000 jobs each
      dueAt: NOW + DAY + Math.floor(((i % 20_000) * 10 * DAY) / 20_000) + (i >= 20_000 ? 1 : 0),
      payload: { i },
      target: "t",
      targetOptions: null,
      maxAttempts: 3,
      expireAfterMs: null,
      tags,
    });
    for (let b = 0; b < 10; b++) {
      const jobs = Array.from({ length: 2000 }, (_, k) => job(b * 2000 + k, [`u:${k % 97}`]));
      await store.jobsInsert({ jobs, now: NOW });
    }
    const mine = Array.from({ length: 100 }, (_, k) => job(30_000 + k * 200, ["erase:me", "x"]));
    for (const r of await store.jobsInsert({ jobs: mine, now: NOW })) {
      tagged.push({ shard: r.job.shard, id: r.job.id, dueAt: r.job.dueAt });
    }
    const retried = Array.from({ length: 100 }, (_, k) => job(70_000 + k * 200, ["retry:me"]));
    for (const r of await store.jobsInsert({ jobs: retried, now: NOW })) {
      dead.push({ shard: r.job.shard, id: r.job.id, dueAt: r.job.dueAt });
    }
    for (let b = 0; b < 5; b++) {
      const jobs = Array.from({ length: 2000 }, (_, k) => job(100_000 + b * 2000 + k, ["done"]));
      await store.jobsInsert({ jobs, now: NOW });
      // pending, held by a pause in one case only (tag "hold")
      const held = Array.from({ length: 2000 }, (_, k) => job(200_000 + b * 2000 + k, ["hold"]));
      await store.jobsInsert({ jobs: held, now: NOW });
    }
    // Finished rows as a settlement writes them (the statement triggers keep the counters):
    // the retry jobs dead, 10,000 others succeeded.
    const s = `"${store.schema}"`;
    await store.connection.query(
      `WITH d AS (
         DELETE FROM ${s}.jobs_live WHERE tags LIKE '%retry:me%' OR tags LIKE '%"done"%'
         RETURNING *
       )
       INSERT INTO ${s}.jobs_history (${COLS}, status, finished_at)
       SELECT ${COLS}, CASE WHEN tags LIKE '%retry:me%' THEN 'dead' ELSE 'succeeded' END, $1
       FROM d`,
      [NOW],
    );
    await store.connection.query(`ANALYZE`);
  });
  afterAll(async () => {
    await store.close();
  });

  type Kind = "cancel" | "erase" | "reschedule" | "retryKeysTake" | "retry";
  /** Each statement's arguments as operations.ts act passes them. */
  function argsOf(kind: Kind): unknown[] {
    const batch = kind === "retry" || kind === "retryKeysTake" ? dead : tagged;
    const shards = batch.map((t) => t.shard);
    const ids = batch.map((t) => t.id);
    const read = batch.map((t) => t.dueAt);
    const due = NOW + 2 * DAY;
    switch (kind) {
      case "cancel":
        return [shards, ids, "acme", NOW, read];
      case "erase":
        return [shards, ids, "acme", read];
      case "reschedule": {
        const moved = read.map((d) => d + DAY);
        const buckets = moved.map((d) => bucketOf(d, store.bucketWidthMs));
        return [shards, ids, moved, buckets, "acme", NOW, read];
      }
      case "retryKeysTake":
        return [shards, ids, "acme"];
      case "retry":
        return [shards, ids, "acme", due, bucketOf(due, store.bucketWidthMs), NOW];
    }
  }

  async function plan(kind: Kind): Promise<PlanNode[]> {
    const sql = operationStatements(store.schema);
    const args = argsOf(kind);
    const c = await store.connection.connect();
    try {
      await c.query("BEGIN");
      const { rows } = await c.query<{ "QUERY PLAN": { Plan: PlanNode }[] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql[kind]}`,
        args,
      );
      return walk(rows[0]!["QUERY PLAN"][0]!.Plan);
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }
  }

  const readBySeqScan = (nodes: PlanNode[]) =>
    nodes
      .filter((p) => p["Node Type"] === "Seq Scan" && (p["Actual Loops"] ?? 0) > 0)
      .map((p) => ({
        relation: p["Relation Name"],
        read: (p["Actual Rows"] ?? 0) + (p["Rows Removed by Filter"] ?? 0),
      }))
      .filter((p) => p.read > 0);

  it.each(["erase", "cancel", "reschedule", "retryKeysTake", "retry"] as const)(
    "%s of 100 jobs among 30,000 reads no row by sequential scan",
    async (kind) => {
      // EXPLAIN ANALYZE runs the statement: what it deletes is rolled back with its transaction
      const nodes = await plan(kind);
      expect(readBySeqScan(nodes)).toEqual([]);
      const probes = nodes.filter((p) => p["Node Type"] === "Index Scan" && p["Actual Loops"]);
      expect(probes.length).toBeGreaterThan(0);
    },
  );

  it("reschedule of 100 held jobs among 10,100 held reads no row by sequential scan", async () => {
    const s = `"${store.schema}"`;
    const c = await store.connection.connect();
    try {
      await c.query("BEGIN");
      // held as a pause's pass holds them (pauses.ts): the tagged jobs and the 10,000 "hold"
      await c.query(
        `INSERT INTO ${s}.pauses (id, tenant, scope_kind, scope_value, on_resume, state,
           paused_at, held, hold_due, hold_id, hold_done)
         VALUES ('p1', 'acme', 'tenant', 'acme', 'keep', 'active', $1, 10100, 0, '', true)`,
        [NOW],
      );
      await c.query(
        `WITH d AS (
           DELETE FROM ${s}.jobs_live WHERE tags LIKE '%erase:me%' OR tags LIKE '%"hold"%'
           RETURNING *
         )
         INSERT INTO ${s}.jobs_held (${COLS}, pause_id) SELECT ${COLS}, 'p1' FROM d`,
      );
      await c.query(`ANALYZE ${s}.jobs_held`);
      await c.query(`ANALYZE ${s}.jobs_live`);
      const { rows } = await c.query<{ "QUERY PLAN": { Plan: PlanNode }[] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${operationStatements(store.schema).reschedule}`,
        argsOf("reschedule"),
      );
      const nodes = walk(rows[0]!["QUERY PLAN"][0]!.Plan);
      expect(readBySeqScan(nodes)).toEqual([]);
      const held = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${s}.jobs_held WHERE tags LIKE '%erase:me%' AND due_at > $1`,
        [NOW + 11 * DAY],
      );
      expect(held.rows[0]!.n).toBeGreaterThan(0);
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }
  });

  it("the statements act on every job of the batch", async () => {
    const sql = operationStatements(store.schema);
    const args = [tagged.map((t) => t.shard), tagged.map((t) => t.id), "acme"];
    const dues = tagged.map((t) => t.dueAt);
    const c = await store.connection.connect();
    try {
      await c.query("BEGIN");
      const erased = await c.query<{ n: number }>(sql.erase, [...args, dues]);
      expect(erased.rows[0]!.n).toBe(100);
      await c.query("ROLLBACK");
      await c.query("BEGIN");
      const cancelled = await c.query<{ n: number }>(sql.cancel, [...args, NOW, dues]);
      expect(cancelled.rows[0]!.n).toBe(100);
      await c.query("ROLLBACK");
      await c.query("BEGIN");
      const moved = await c.query<{ n: number }>(sql.reschedule, argsOf("reschedule"));
      expect(moved.rows[0]!.n).toBe(100);
      await c.query("ROLLBACK");
      await c.query("BEGIN");
      await c.query(sql.retryKeysTake, argsOf("retryKeysTake"));
      const retried = await c.query<{ n: number }>(sql.retry, argsOf("retry"));
      expect(retried.rows[0]!.n).toBe(100);
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }
  });
});
