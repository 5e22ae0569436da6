import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import { withNext } from "../../src/core/series.js";
import { shardFilter } from "../../src/stores/postgres/claim.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { jobMaker } from "../support/jobs.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { dailySeries, utcOccurrence } from "../support/series.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const FIRST = Date.UTC(2026, 2, 2, 9);
const DAY = 86_400_000;

/**
 * The claim of one-shot jobs with no pause open is one statement on its own (claim.ts,
 * claimDueAlone): no BEGIN/COMMIT. A due series occurrence or an open pause makes the claim
 * take its transaction, so the series advance and the hold stay atomic with it. The
 * statements are read at node-postgres's client as they are sent (the store and the server
 * are real).
 */
const server = usePostgresServer();

describe("postgres claim without a transaction", () => {
  let store: PostgresStore;
  let newId: () => string;
  let sent: string[];

  beforeEach(async () => {
    store = await PostgresStore.open({ url: server.url, schema: freshSchema("alone") });
    let t = T0;
    newId = createIdGenerator(() => t++);
    sent = [];
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const config = args[0];
      sent.push(typeof config === "string" ? config : ((config as { text?: string }).text ?? ""));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await store.close();
  });

  const makeJob = jobMaker(T0);
  const job = (over: Partial<NewJob> = {}): NewJob =>
    makeJob(FIRST - 1000, { tenant: "a", ...over });

  async function claim(at = FIRST) {
    sent = [];
    const jobs = await store.jobsClaimDue({
      now: at,
      dueBefore: at,
      limit: 100,
      leaseMs: 30_000,
      owner: "n",
    });
    const began = sent.some((s) => /^\s*BEGIN/i.test(s));
    return { jobs, began, statements: sent.length };
  }

  async function seriesWithOccurrence() {
    const w = withNext(dailySeries(newId(), T0), utcOccurrence(FIRST), newId, T0);
    await store.schedulesInsert({ schedule: w.schedule, job: w.job, now: T0 });
    return { seriesId: w.schedule.id, jobId: w.job!.id };
  }

  it("claims one-shot jobs in one statement, with the lease, fence and attempt of a claim", async () => {
    const ids = (await store.jobsInsert({ jobs: [job(), job(), job()], now: T0 })).map(
      (r) => r.job.id,
    );
    const got = await claim();
    expect(got.began).toBe(false);
    expect(got.statements).toBe(1);
    expect(got.jobs.map((j) => j.id).sort()).toEqual([...ids].sort());
    expect(got.jobs.every((j) => j.status === "claimed" && j.fence === 1 && j.attempts === 1)).toBe(
      true,
    );
    expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 0, claimed: 3 });
    // nothing due: still one statement, and it says so
    const none = await claim();
    expect(none).toEqual({ jobs: [], began: false, statements: 1 });
  });

  it("a due occurrence takes the transaction: the series advances with the claim; one-shot claims go back to one statement", async () => {
    const { seriesId, jobId } = await seriesWithOccurrence();
    const oneShot = (await store.jobsInsert({ jobs: [job()], now: T0 }))[0]!.job.id;
    const got = await claim();
    expect(got.began).toBe(true);
    expect(got.jobs.map((j) => j.id).sort()).toEqual([jobId, oneShot].sort());
    const after = (await store.scheduleGet({ id: seriesId }))!;
    expect(after).toMatchObject({ firedCount: 1, lastJobId: jobId, nextAt: FIRST + DAY });
    expect(await store.jobGet({ id: after.nextJobId! })).toMatchObject({ status: "pending" });
    // the claim after one that took an occurrence is made in the transaction; once one
    // there takes none, the next is one statement again
    await store.jobsInsert({ jobs: [job()], now: T0 });
    expect((await claim()).began).toBe(true);
    await store.jobsInsert({ jobs: [job()], now: T0 });
    const later = await claim();
    expect(later).toMatchObject({ began: false, statements: 1 });
    expect(later.jobs).toHaveLength(1);
  });

  it("an open pause takes the transaction: the job it covers is held, the other claimed", async () => {
    const [mine, other] = (
      await store.jobsInsert({ jobs: [job(), job({ tenant: "b" })], now: T0 })
    ).map((r) => r.job.id);
    // the pause's own pass has not run: the claim must hold the covered job itself
    await store.pauses!.pauseInsert({
      pause: { id: newId(), tenant: "a", scope: { tenant: true }, onResume: "fire" },
      now: T0,
    });
    const got = await claim();
    expect(got.began).toBe(true);
    expect(got.jobs.map((j) => j.id)).toEqual([other]);
    expect(await store.jobGet({ id: mine! })).toMatchObject({ status: "pending" });
    expect(await store.pauses!.pausedJobsCount({})).toBe(1);
  });

  it("an open pause with nothing due costs no transaction: an idle claim stays one statement", async () => {
    // pending before the pause (the insert would hold it) and due only tomorrow
    const later = (
      await store.jobsInsert({ jobs: [makeJob(FIRST + DAY, { tenant: "a" })], now: T0 })
    )[0]!.job;
    await store.pauses!.pauseInsert({
      pause: { id: newId(), tenant: "a", scope: { tenant: true }, onResume: "fire" },
      now: T0,
    });
    expect(await claim()).toEqual({ jobs: [], began: false, statements: 1 });
    expect(await claim()).toEqual({ jobs: [], began: false, statements: 1 });
    // once the covered job is due (the pause's pass has not run), the claim takes its
    // transaction and holds it
    const due = await claim(FIRST + DAY);
    expect(due.began).toBe(true);
    expect(due.jobs).toEqual([]);
    expect(await store.pauses!.pausedJobsCount({})).toBe(1);
    expect(await store.jobGet({ id: later.id })).toMatchObject({ status: "pending" });
  });
});

interface PlanNode {
  "Node Type": string;
  Plans?: PlanNode[];
}

function nodeTypes(node: PlanNode, out: string[] = []): string[] {
  out.push(node["Node Type"]);
  for (const child of node.Plans ?? []) nodeTypes(child, out);
  return out;
}

/**
 * A claim over every shard filters none (claim.ts shardFilter): on a partition never
 * analysed, a filter naming all 64 shards makes the planner read the whole partition and
 * sort it instead of reading the due prefix of (due_at, id).
 */
describe("postgres claim over every shard", () => {
  it("maps every shard to no filter, a part of them to themselves", () => {
    const all = Array.from({ length: 64 }, (_, i) => i);
    expect(shardFilter(undefined, 64)).toBeNull();
    expect(shardFilter(all, 64)).toBeNull();
    expect(shardFilter([...all].reverse(), 64)).toBeNull();
    expect(shardFilter(all.slice(1), 64)).toEqual(all.slice(1));
    // 64 entries, but not every shard: a duplicate and one out of range
    const notAll = [...all.slice(0, 62), 0, 64];
    expect(shardFilter(notAll, 64)).toEqual(notAll);
  });

  it("reads the due prefix by index on a fresh, unanalysed partition", async () => {
    const store = await PostgresStore.open({ url: server.url, schema: freshSchema("fresh") });
    try {
      const makeJob = jobMaker(T0);
      const jobs = Array.from({ length: 20_000 }, () => makeJob(FIRST - 1000));
      for (let i = 0; i < jobs.length; i += 10_000)
        await store.jobsInsert({ jobs: jobs.slice(i, i + 10_000), now: T0 });
      const all = Array.from({ length: store.shardCount }, (_, i) => i);
      const plan = async (shards: number[] | null) => {
        const { rows } = await store.connection.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
          `EXPLAIN (FORMAT JSON) ${store.context.sql.claimDueAlone}`,
          [FIRST, 500, "n", FIRST, shards, 30_000],
        );
        return nodeTypes(rows[0]!["QUERY PLAN"][0].Plan);
      };
      const ours = await plan(shardFilter(all, store.shardCount));
      expect(ours).not.toContain("Sort");
      expect(ours).toContain("Index Scan");
      // what the claim sent before: every shard spelled out
      expect(await plan(all)).toContain("Sort");
    } finally {
      await store.close();
    }
  });
});
