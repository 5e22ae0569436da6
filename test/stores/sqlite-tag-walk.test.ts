import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import type { Operation } from "../../src/core/operation.js";
import { MIGRATIONS } from "../../src/stores/sqlite/migrations.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { tempDir } from "../support/temp-dir.js";

/**
 * How the SQLite store walks a tag in a bulk operation (migration 13): by the bucket a tag
 * entry was written in, then by job id, each entry met once whatever happens to its job
 * meanwhile; and an erase removes the feed rows such a walk wrote.
 */
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup(path?: string) {
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  const clock = new ManualClock(T0);
  const file = path ?? join(dir.path, "jobs.db");
  const store = new SqliteStore({ path: file });
  const scheduler = new Scheduler({ store, clock, logger: silentLogger });
  cleanups.push(async () => {
    await scheduler.close();
  });
  return { clock, store, scheduler, path: file, dir };
}

/** Jobs of tag t:1 scheduled in this order: ids grow, due hours +3, +1, +2 (3 each). */
async function scheduleOutOfOrder(s: Scheduler): Promise<{ id: string; dueAt: number }[]> {
  const made: { id: string; dueAt: number }[] = [];
  for (const hours of [3, 1, 2]) {
    for (let i = 0; i < 3; i++) {
      const { job } = await s.schedule({
        dueAt: T0 + hours * HOUR + i * 60_000,
        target: "remind",
        tags: ["t:1"],
      });
      made.push({ id: job.id, dueAt: job.dueAt });
    }
  }
  return made;
}

async function steps(store: SqliteStore, op: Operation, limit: number): Promise<Operation[]> {
  const seen: Operation[] = [];
  for (let i = 0; i < 100; i++) {
    const r = (await store.operationStep({ id: op.id, now: T0, limit }))!;
    seen.push(r.operation);
    if (r.operation.state !== "queued" && r.operation.state !== "running") return seen;
  }
  throw new Error("operation did not end");
}

describe("SQLite tag walk", () => {
  it("walks a tag by the bucket each entry was written in, then by id: each job once", async () => {
    const { store, scheduler } = setup();
    const jobs = await scheduleOutOfOrder(scheduler);
    const { operation } = await scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["t:1"] },
    });
    const order: string[] = [];
    const cancelled = new Set<string>();
    let first: Operation | undefined;
    for (let op = operation; op.state === "queued" || op.state === "running";) {
      op = (await store.operationStep({ id: op.id, now: T0, limit: 2 }))!.operation;
      first ??= op;
      for (const j of jobs) {
        if (cancelled.has(j.id)) continue;
        if ((await scheduler.get(j.id))!.status === "cancelled") {
          cancelled.add(j.id);
          order.push(j.id);
        }
      }
    }
    // due order of the buckets, id order inside each: +1h, +2h, +3h
    const byBucket = [...jobs].sort((a, b) => a.dueAt - b.dueAt).map((j) => j.id);
    expect(order).toEqual(byBucket);
    expect(first!.cursor).toBe(`${T0 + HOUR}/${byBucket[1]}`);
    const done = (await scheduler.getOperation(operation.id))!;
    expect(done).toMatchObject({ state: "done", scanned: 9, changed: 9, skipped: 0 });
  });

  it("a reschedule walks the tag in job id order and moves every job once", async () => {
    const { store, scheduler } = setup();
    const jobs = await scheduleOutOfOrder(scheduler);
    const { operation } = await scheduler.startOperation({
      kind: "reschedule",
      filter: { tags: ["t:1"] },
      shiftMs: 2 * HOUR,
    });
    const [first] = await steps(store, operation, 2);
    expect(first!.cursor).toBe(jobs[1]!.id);
    for (const j of jobs) {
      expect((await scheduler.get(j.id))!).toMatchObject({ dueAt: j.dueAt + 2 * HOUR, version: 2 });
    }
    expect((await scheduler.getOperation(operation.id))!).toMatchObject({
      state: "done",
      changed: 9,
    });
  });

  it("a replace by key keeps the entry of a tag it keeps and adds one for a new tag", async () => {
    const { store, scheduler } = setup();
    const { job } = await scheduler.schedule({
      dueAt: T0 + HOUR,
      target: "remind",
      key: "k",
      tags: ["a", "b"],
    });
    const r = await scheduler.schedule({
      dueAt: T0 + 5 * HOUR,
      target: "remind",
      key: "k",
      keyMode: "replace",
      tags: ["a", "c"],
    });
    expect(r).toMatchObject({ created: false, outcome: "replaced" });
    const entries = store.connection
      .prepare(`SELECT tag, walk_bucket FROM job_tags WHERE job_id = ? ORDER BY tag`)
      .all(job.id);
    expect(entries).toEqual([
      { tag: "a", walk_bucket: T0 + HOUR },
      { tag: "c", walk_bucket: T0 + 5 * HOUR },
    ]);
    const { operation } = await scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["c"] },
    });
    await steps(store, operation, 1);
    expect((await scheduler.getOperation(operation.id))!).toMatchObject({
      state: "done",
      scanned: 1,
      changed: 1,
    });
    expect((await scheduler.get(job.id))!.status).toBe("cancelled");
  });

  it("an erase removes the feed rows a walked cancel wrote, and no other job's", async () => {
    const { store, scheduler } = setup();
    const jobs = await scheduleOutOfOrder(scheduler);
    const other = await scheduler.schedule({ dueAt: T0 + HOUR, target: "remind", tags: ["t:2"] });
    const { operation: cancel } = await scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["t:1"] },
    });
    await steps(store, cancel, 4);
    const rows = (sql: string, ...args: unknown[]) =>
      store.connection
        .prepare(sql)
        .pluck()
        .get(...args) as number;
    expect(rows(`SELECT count(*) FROM changes WHERE walk_bucket IS NOT NULL`)).toBe(9);
    const { operation: erase } = await scheduler.startOperation({
      kind: "erase",
      filter: { tags: ["t:1"] },
    });
    await steps(store, erase, 4);
    const ids = JSON.stringify(jobs.map((j) => j.id));
    expect(
      rows(`SELECT count(*) FROM changes WHERE job_id IN (SELECT value FROM json_each(?))`, ids),
    ).toBe(0);
    expect(rows(`SELECT count(*) FROM changes WHERE job_id = ?`, other.job.id)).toBe(1);
  });

  it("a walk begun in job id order before migration 13 goes on in that order", async () => {
    const { store, scheduler } = setup();
    const jobs = await scheduleOutOfOrder(scheduler);
    const { operation } = await scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["t:1"] },
    });
    // the record as a walk in id order left it, three jobs in
    store.connection
      .prepare(`UPDATE operations SET state = 'running', cursor = ? WHERE id = ?`)
      .run(jobs[2]!.id, operation.id);
    const r = (await store.operationStep({ id: operation.id, now: T0, limit: 3 }))!;
    expect(r.operation.cursor).toBe(jobs[5]!.id);
    const status = async (j: { id: string }) => (await scheduler.get(j.id))!.status;
    expect(await Promise.all(jobs.map(status))).toEqual([
      ...["pending", "pending", "pending"],
      ...["cancelled", "cancelled", "cancelled"],
      ...["pending", "pending", "pending"],
    ]);
  });

  it("opens a version 12 file: tag entries get their job's bucket, the feed its two indexes", async () => {
    const first = setup();
    const { job } = await first.scheduler.schedule({
      dueAt: T0 + 2 * HOUR,
      target: "remind",
      tags: ["x"],
    });
    const db = first.store.connection;
    // back to layout 12: job_tags without walk_bucket, one changes_job over every row
    db.exec(`
      DROP INDEX job_tags_walk;
      CREATE TABLE job_tags_v12 (tenant TEXT NOT NULL, tag TEXT NOT NULL, job_id TEXT NOT NULL,
        seq INTEGER NOT NULL, PRIMARY KEY (tenant, tag, job_id)) WITHOUT ROWID;
      INSERT INTO job_tags_v12 SELECT tenant, tag, job_id, seq FROM job_tags;
      DROP TABLE job_tags;
      ALTER TABLE job_tags_v12 RENAME TO job_tags;
      DROP INDEX changes_walk;
      DROP INDEX changes_job;
      ALTER TABLE changes DROP COLUMN walk_bucket;
      CREATE INDEX changes_job ON changes (job_id);
    `);
    db.pragma(`user_version = ${MIGRATIONS.length - 1}`);
    await first.scheduler.close();

    const again = setup(first.path);
    const c = again.store.connection;
    expect(c.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    expect(c.prepare(`SELECT walk_bucket FROM job_tags WHERE job_id = ?`).get(job.id)).toEqual({
      walk_bucket: T0 + 2 * HOUR,
    });
    const indexes = c
      .prepare(`SELECT name, sql FROM sqlite_master WHERE tbl_name = 'changes' AND type = 'index'`)
      .all() as { name: string; sql: string }[];
    expect(indexes.find((i) => i.name === "changes_job")!.sql).toMatch(/WHERE walk_bucket IS NULL/);
    expect(indexes.map((i) => i.name)).toContain("changes_walk");
    const { operation } = await again.scheduler.startOperation({
      kind: "erase",
      filter: { tags: ["x"] },
    });
    await steps(again.store, operation, 10);
    expect(c.prepare(`SELECT count(*) FROM changes WHERE job_id = ?`).pluck().get(job.id)).toBe(0);
  });
});
