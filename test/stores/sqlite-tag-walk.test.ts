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
 * How the SQLite store walks a tag in a bulk cancel (migration 13, operation-walk.ts): the
 * tag's entries planned a chunk at a time into operation_walk, then cancelled in (bucket,
 * job id) order, each entry met once whatever happens to its job meanwhile; the other kinds
 * in job id order; and an erase removes the feed rows a walked cancel wrote.
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
  it("plans the tag's entries, then cancels them by bucket, then by id: each job once", async () => {
    const { store, scheduler } = setup();
    const jobs = await scheduleOutOfOrder(scheduler);
    const { operation } = await scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["t:1"] },
    });
    const planned = (await store.operationStep({ id: operation.id, now: T0, limit: 3 }))!;
    // 9 entries < 3 x PLAN_FACTOR: the tag is planned through its last id, nothing cancelled
    expect(planned.scanned).toBe(9);
    expect(planned.operation).toMatchObject({ state: "running", scanned: 0, changed: 0 });
    expect(planned.operation.cursor).toBe(`walk/${jobs[8]!.id}`);
    const order: string[] = [];
    const cancelled = new Set<string>();
    for (let op = planned.operation; op.state === "queued" || op.state === "running";) {
      op = (await store.operationStep({ id: op.id, now: T0, limit: 2 }))!.operation;
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
    const done = (await scheduler.getOperation(operation.id))!;
    expect(done).toMatchObject({ state: "done", scanned: 9, changed: 9, skipped: 0 });
    const left = store.connection.prepare(`SELECT count(*) FROM operation_walk`).pluck().get();
    expect(left).toBe(0);
  });

  it("plans a large tag in chunks of steps, and walks each chunk before the next", async () => {
    const { store, scheduler } = setup();
    const made = await scheduler.scheduleMany(
      Array.from({ length: 20 }, (_, i) => ({
        dueAt: T0 + (20 - i) * HOUR,
        target: "remind",
        tags: ["big"],
      })),
    );
    const { operation } = await scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["big"] },
    });
    const cursors: (string | null)[] = [];
    let op = operation;
    while (op.state === "queued" || op.state === "running") {
      op = (await store.operationStep({ id: op.id, now: T0, limit: 2 }))!.operation;
      cursors.push(op.cursor);
    }
    const id = (i: number) => made[i]!.job.id;
    // limit 2: 8 entries a planning step (PLAN_FACTOR 4); the third finds 4 of 8 and walks
    expect(cursors.slice(0, 3)).toEqual([`plan/8/${id(7)}`, `plan/16/${id(15)}`, `walk/${id(19)}`]);
    expect(cursors.length).toBe(3 + 10 + 1); // 10 walk batches, then a plan that finds none
    expect(op).toMatchObject({ state: "done", scanned: 20, changed: 20 });
  });

  it("a job moved or erased after it was planned is met once, at its planned place", async () => {
    const { store, scheduler } = setup();
    const jobs = await scheduleOutOfOrder(scheduler);
    const gone = await scheduler.schedule({
      dueAt: T0 + HOUR,
      target: "remind",
      tags: ["t:1", "gone"],
    });
    const { operation } = await scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["t:1"] },
    });
    await store.operationStep({ id: operation.id, now: T0, limit: 3 }); // planned
    // the +1h jobs moved past every other bucket; the extra job erased
    for (const j of jobs.slice(3, 6)) {
      await scheduler.reschedule(j.id, { dueAt: T0 + 10 * HOUR });
    }
    const { operation: erase } = await scheduler.startOperation({
      kind: "erase",
      filter: { tags: ["gone"] },
    });
    await steps(store, erase, 10);
    expect(await scheduler.get(gone.job.id)).toBeNull();
    await steps(store, operation, 2);
    expect((await scheduler.getOperation(operation.id))!).toMatchObject({
      state: "done",
      scanned: 9,
      changed: 9,
    });
    for (const j of jobs) expect((await scheduler.get(j.id))!.status).toBe("cancelled");
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

  it("cancelling the operation drops what it planned and had not walked", async () => {
    const { store, scheduler } = setup();
    await scheduleOutOfOrder(scheduler);
    const { operation } = await scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["t:1"] },
    });
    await store.operationStep({ id: operation.id, now: T0, limit: 3 }); // planned
    await store.operationStep({ id: operation.id, now: T0, limit: 2 }); // 2 cancelled
    const walk = () =>
      store.connection
        .prepare(`SELECT count(*) FROM operation_walk WHERE op_id = ?`)
        .pluck()
        .get(operation.id);
    expect(walk()).toBe(7);
    expect(await scheduler.cancelOperation(operation.id)).toMatchObject({ state: "cancelled" });
    expect(walk()).toBe(0);
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

  it("a cancel begun in job id order before migration 13 goes on in that order", async () => {
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

  it("opens a version 12 file: the walk table, the feed's two indexes", async () => {
    const first = setup();
    const { job } = await first.scheduler.schedule({
      dueAt: T0 + 2 * HOUR,
      target: "remind",
      tags: ["x"],
    });
    const db = first.store.connection;
    // back to layout 12: no operation_walk, one changes_job over every feed row
    db.exec(`
      DROP TABLE operation_walk;
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
    const indexes = c
      .prepare(`SELECT name, sql FROM sqlite_master WHERE tbl_name = 'changes' AND type = 'index'`)
      .all() as { name: string; sql: string }[];
    expect(indexes.find((i) => i.name === "changes_job")!.sql).toMatch(/WHERE walk_bucket IS NULL/);
    expect(indexes.map((i) => i.name)).toContain("changes_walk");
    const { operation } = await again.scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["x"] },
    });
    await steps(again.store, operation, 10);
    expect((await again.scheduler.get(job.id))!.status).toBe("cancelled");
    const { operation: erase } = await again.scheduler.startOperation({
      kind: "erase",
      filter: { tags: ["x"] },
    });
    await steps(again.store, erase, 10);
    expect(c.prepare(`SELECT count(*) FROM changes WHERE job_id = ?`).pluck().get(job.id)).toBe(0);
  });
});
