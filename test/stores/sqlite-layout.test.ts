import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import { MIGRATIONS } from "../../src/stores/sqlite/migrations.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { tempDir } from "../support/temp-dir.js";

/**
 * The SQLite layout's promise (migrations.ts): firing writes a job's row never, only small
 * tables that grow in due order; and a file of the first layout opens in the current one
 * with every job in the state it had.
 */
const dir = tempDir();
afterAll(() => dir.cleanup());

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

function newJobs(n: number, over: Partial<NewJob> = {}): NewJob[] {
  const newId = createIdGenerator(() => T0);
  return Array.from({ length: n }, (_, i) => {
    return {
      id: newId(),
      tenant: "default",
      key: null,
      dueAt: T0 + i * 10,
      payload: { i },
      target: "t",
      targetOptions: null,
      maxAttempts: 3,
      expireAfterMs: null,
      ...over,
    };
  });
}

/** Stages the first hour and claims everything due at `now`. */
async function claimDue(store: SqliteStore, now: number) {
  await store.bucketsStage({ until: T0 + HOUR, maxRows: 1000 });
  return store.jobsClaimDue({ now, dueBefore: now, limit: 100, leaseMs: 30_000, owner: "n" });
}

describe("SQLite layout", () => {
  it("fires and settles without writing the jobs rows", async () => {
    const store = new SqliteStore({ path: join(dir.path, "untouched.db") });
    try {
      await store.jobsInsert({ jobs: newJobs(50), now: T0 });
      const rows = () => store.connection.prepare(`SELECT * FROM jobs ORDER BY seq`).all();
      const before = rows();
      const claimed = await claimDue(store, T0 + 1000);
      expect(claimed).toHaveLength(50);
      expect(claimed.every((j) => j.status === "claimed" && j.fence === 1)).toBe(true);
      const applied = await store.jobsSettle({
        now: T0 + 2000,
        settlements: claimed.map((j) => ({
          id: j.id,
          fence: j.fence,
          firedAt: T0 + 1500,
          outcome: "succeeded" as const,
          result: { ok: j.id },
        })),
      });
      expect(applied.every(Boolean)).toBe(true);
      expect(rows()).toEqual(before);
      const count = (table: string) =>
        store.connection.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
      expect(count("claims")).toBe(0);
      expect(count("finished")).toBe(50);
      const done = await store.jobGet({ id: claimed[7]!.id });
      expect(done).toMatchObject({
        status: "succeeded",
        attempts: 1,
        fence: 1,
        firedAt: T0 + 1500,
        finishedAt: T0 + 2000,
        updatedAt: T0 + 2000,
        lastResult: { ok: claimed[7]!.id },
        leaseOwner: null,
      });
    } finally {
      await store.close();
    }
  });

  it("stages from the bucket index alone; the claim drops jobs no longer pending and fills its batch", async () => {
    const store = new SqliteStore({ path: join(dir.path, "staging.db") });
    try {
      const minutes = { A: 50, X: 20, Y: 25, B: 10, C: 30, D: 40, E: 65 };
      const ids = createIdGenerator(() => T0);
      const jobs = Object.entries(minutes).map(([name, m]) => {
        const dueAt = T0 + m * 60_000;
        return {
          ...newJobs(1)[0]!,
          id: ids(),
          dueAt,
          payload: name,
        };
      });
      await store.jobsInsert({ jobs, now: T0 });
      const idOf = (name: string) => jobs.find((j) => j.payload === name)!.id;
      // cancelled before its bucket is staged: staging copies its entry all the same
      expect(await store.jobCancel({ id: idOf("X"), now: T0 })).toMatchObject({
        outcome: "cancelled",
      });
      const now = T0 + 2 * HOUR + 1;
      const staged = await store.bucketsStage({ until: now + HOUR, maxRows: 1000 });
      expect(staged).toMatchObject({ rows: 7, done: true });
      const later = T0 + 10 * HOUR;
      await store.jobReschedule({
        id: idOf("Y"),
        dueAt: later,
        now,
      });
      const claim = () =>
        store.jobsClaimDue({ now, dueBefore: now, limit: 3, leaseMs: 30_000, owner: "n" });
      const first = await claim();
      const second = await claim();
      expect(await claim()).toEqual([]);
      const names = (batch: { payload: unknown }[]) => batch.map((j) => j.payload);
      // due order, a full first batch although the cancelled job's entry came up in it
      expect(names(first)).toEqual(["B", "C", "D"]);
      expect(names(second)).toEqual(["A", "E"]);
      expect(await store.jobGet({ id: idOf("X") })).toMatchObject({ status: "cancelled" });
      expect(await store.jobGet({ id: idOf("Y") })).toMatchObject({
        status: "pending",
        dueAt: later,
      });
      expect(store.connection.prepare(`SELECT count(*) FROM hot`).pluck().get()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("claims a job retried after its bucket was staged around it once, and not before its new time", async () => {
    const store = new SqliteStore({ path: join(dir.path, "stale-entry.db") });
    try {
      const at = (ms: number) => ({ ...newJobs(1)[0]!, dueAt: T0 + ms });
      const ids = createIdGenerator(() => T0 + 1);
      const fill = Array.from({ length: 10 }, (_, i) => ({ ...at(3_000_000 + i), id: ids() }));
      await store.jobsInsert({ jobs: fill, now: T0 });
      // half the bucket staged; J is written into it (straight into hot) and claimed
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 5 });
      const j = { ...at(2000), id: ids() };
      await store.jobsInsert({ jobs: [j], now: T0 });
      const [first] = await store.jobsClaimDue({
        now: T0 + 2000,
        dueBefore: T0 + 2000,
        limit: 100,
        leaseMs: 60_000,
        owner: "n",
      });
      expect(first).toMatchObject({ id: j.id, fence: 1 });
      // the rest of the bucket is staged, J's row with it; then J fails and retries at +3000
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 100 });
      await store.jobsSettle({
        now: T0 + 2100,
        settlements: [
          {
            id: j.id,
            fence: 1,
            firedAt: T0 + 2050,
            outcome: "retry",
            retryAt: T0 + 3000,
            error: "x",
          },
        ],
      });
      const claimAt = (now: number) =>
        store.jobsClaimDue({ now, dueBefore: now, limit: 2, leaseMs: 60_000, owner: "n" });
      expect(await claimAt(T0 + 2500)).toEqual([]);
      const again = await claimAt(T0 + 5000);
      expect(again.map((x) => [x.id, x.fence, x.dueAt])).toEqual([[j.id, 2, T0 + 3000]]);
      const counts = await store.jobsCountByStatus({});
      expect([counts.pending, counts.claimed]).toEqual([10, 1]);
    } finally {
      await store.close();
    }
  });

  it("puts a job back into hot directly in a past bucket whose staging row was pruned", async () => {
    const store = new SqliteStore({ path: join(dir.path, "pruned.db") });
    try {
      await store.jobsInsert({ jobs: newJobs(300), now: T0 });
      const now = T0 + 3 * HOUR;
      await store.bucketsStage({ until: now, maxRows: 1000 });
      const claimed = await store.jobsClaimDue({
        now,
        dueBefore: now,
        limit: 1000,
        leaseMs: 60_000,
        owner: "n",
      });
      const [kept, ...rest] = claimed;
      await store.jobsSettle({
        now,
        settlements: rest.map((x) => ({
          id: x.id,
          fence: x.fence,
          firedAt: now,
          outcome: "succeeded" as const,
          result: null,
        })),
      });
      await store.bucketsStage({ until: now, maxRows: 1000 });
      const stagingRows = () =>
        store.connection.prepare(`SELECT count(*) FROM bucket_staging`).pluck().get();
      expect(stagingRows()).toBe(0);
      await store.jobsSettle({
        now,
        settlements: [{ id: kept!.id, fence: kept!.fence, firedAt: now, outcome: "release" }],
      });
      // nothing to stage again: the released job went into hot, not its 300-row bucket
      expect(await store.bucketsStage({ until: now, maxRows: 1000 })).toMatchObject({ rows: 0 });
      const hot = store.connection.prepare(`SELECT count(*) FROM hot`).pluck().get();
      expect(hot).toBe(1);
      const back = await store.jobsClaimDue({
        now,
        dueBefore: now,
        limit: 10,
        leaseMs: 60_000,
        owner: "n",
      });
      expect(back.map((x) => x.id)).toEqual([kept!.id]);
    } finally {
      await store.close();
    }
  });

  it("opens a file of layout version 1 with every job in the state it had", async () => {
    const path = join(dir.path, "v1.db");
    const v1 = new Database(path);
    v1.pragma("journal_mode = WAL");
    v1.exec(MIGRATIONS[0]!);
    v1.pragma("user_version = 1");
    v1.prepare(
      `INSERT INTO meta (name, value) VALUES ('bucket_width_ms', '3600000'), ('shard_count', '1')`,
    ).run();
    const insert = v1.prepare(`INSERT INTO jobs (id, tenant, key, status, due_at, bucket, shard,
        payload, target, max_attempts, attempts, fence, version, lease_owner, lease_expires_at,
        last_error, last_result, created_at, updated_at, fired_at, finished_at)
      VALUES (@id, 'default', @key, @status, @due, @bucket, 0, '{"n":1}', 't', 3, @attempts,
        @fence, @version, @owner, @lease, @error, @result, @t, @t, @fired, @finished)`);
    const base = {
      key: null,
      attempts: 0,
      fence: 0,
      version: 1,
      owner: null,
      lease: null,
      error: null,
      result: null,
      t: T0,
      fired: null,
      finished: null,
      bucket: T0,
      due: T0 + 5,
    };
    insert.run({ ...base, id: "01PENDING0000000000000000A", status: "pending", key: "kp" });
    insert.run({
      ...base,
      id: "01CLAIMED0000000000000000A",
      status: "claimed",
      attempts: 1,
      fence: 4,
      version: 3,
      owner: "old-node",
      lease: T0 + 60_000,
    });
    insert.run({
      ...base,
      id: "01SUCCESS0000000000000000A",
      status: "succeeded",
      key: "ks",
      attempts: 1,
      fence: 1,
      version: 3,
      result: '{"ok":true}',
      fired: T0 + 6,
      finished: T0 + 9,
    });
    insert.run({
      ...base,
      id: "01DEADJOB0000000000000000A",
      status: "dead",
      attempts: 3,
      fence: 3,
      version: 7,
      error: "boom",
      fired: T0 + 7,
      finished: T0 + 8,
    });
    v1.prepare(
      `INSERT INTO status_counts VALUES ('default', 'pending', 1), ('default', 'claimed', 1),
      ('default', 'succeeded', 1), ('default', 'dead', 1)`,
    ).run();
    v1.prepare(`INSERT INTO bucket_counts VALUES (?, 'default', 1)`).run(T0);
    v1.close();

    const store = new SqliteStore({ path });
    try {
      expect(store.connection.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      expect(await store.jobGet({ id: "01PENDING0000000000000000A" })).toMatchObject({
        status: "pending",
        key: "kp",
        version: 1,
        traceContext: null, // version 4's column, NULL on every row written before it
      });
      expect(await store.jobGet({ id: "01CLAIMED0000000000000000A" })).toMatchObject({
        status: "claimed",
        attempts: 1,
        fence: 4,
        version: 3,
        leaseOwner: "old-node",
        leaseExpiresAt: T0 + 60_000,
      });
      expect(await store.jobGet({ id: "01SUCCESS0000000000000000A" })).toMatchObject({
        status: "succeeded",
        lastResult: { ok: true },
        firedAt: T0 + 6,
        finishedAt: T0 + 9,
      });
      expect(await store.jobGet({ id: "01DEADJOB0000000000000000A" })).toMatchObject({
        status: "dead",
        lastError: "boom",
        attempts: 3,
        version: 7,
        finishedAt: T0 + 8,
      });
      // the live key is still held; the finished job's key is free
      expect(await store.jobGetByKey({ tenant: "default", key: "kp" })).toMatchObject({
        id: "01PENDING0000000000000000A",
      });
      expect(await store.jobGetByKey({ tenant: "default", key: "ks" })).toBeNull();
      // the migrated claim settles under its token, and a stale token changes nothing
      const settle = (fence: number) =>
        store.jobsSettle({
          now: T0 + 100,
          settlements: [
            {
              id: "01CLAIMED0000000000000000A",
              fence,
              firedAt: T0 + 50,
              outcome: "succeeded",
              result: null,
            },
          ],
        });
      expect(await settle(3)).toEqual([false]);
      expect(await settle(4)).toEqual([true]);
      // a retried dead job's next claim carries a token above every earlier one
      await store.jobRetry({
        id: "01DEADJOB0000000000000000A",
        dueAt: T0 + 5,
        now: T0 + 100,
      });
      const claimed = await claimDue(store, T0 + 200);
      expect(claimed.map((j) => [j.id, j.fence]).sort()).toEqual([
        ["01DEADJOB0000000000000000A", 4],
        ["01PENDING0000000000000000A", 1],
      ]);
    } finally {
      await store.close();
    }
  });
});
