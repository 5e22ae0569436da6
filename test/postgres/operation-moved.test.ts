import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { bucketOf } from "../../src/core/buckets.js";
import { ManualClock } from "../../src/core/clock.js";
import type { Job } from "../../src/core/job.js";
import { operationStatements } from "../../src/stores/postgres/operation-statements.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 5, 15, 12, 0, 0);

const server = usePostgresServer();

/**
 * A bulk batch writes with the due time it read: a job moved between the batch's read and its
 * write (here a single reschedule committed in between) must be left as it was moved, live or
 * held by a pause. The batch's write statement is run as operations.ts runs it after its read.
 */
describe("postgres bulk batch meets a job moved since its read", () => {
  let store: PostgresStore;
  let scheduler: Scheduler;
  let live: Job;
  let held: Job;

  beforeAll(async () => {
    store = await PostgresStore.open({ url: server.url, schema: freshSchema("opmoved") });
    scheduler = new Scheduler({ store, clock: new ManualClock(T0) });
    live = (await scheduler.schedule({ dueAt: T0 + HOUR, target: "t", tags: ["live"] })).job;
    await scheduler.pause({ scope: { tag: "held" } });
    held = (await scheduler.schedule({ dueAt: T0 + HOUR, target: "t", tags: ["held"] })).job;
    await scheduler.runPauseWork();
    expect((await scheduler.get(held.id))!.pausedBy).not.toBeNull();
  });
  afterAll(async () => {
    await store.close();
  });

  it("a reschedule batch leaves a live and a held job rescheduled after its read as they are", async () => {
    // the batch read both at T0 + 1h; then each is rescheduled alone to T0 + 5h
    for (const j of [live, held]) await scheduler.reschedule(j.id, T0 + 5 * HOUR);
    const jobs = [live, held];
    const shifted = jobs.map(() => T0 + 2 * HOUR); // a +1h shift of the due time read
    const r = await store.connection.query(operationStatements(store.schema).reschedule, [
      jobs.map((j) => j.shard),
      jobs.map((j) => j.id),
      shifted,
      shifted.map((d) => bucketOf(d, store.bucketWidthMs)),
      "default",
      T0,
      jobs.map(() => T0 + HOUR),
    ]);
    expect(Number(r.rows[0]?.n ?? 0)).toBe(0);
    for (const j of jobs) {
      const now = (await scheduler.get(j.id))!;
      expect(now.dueAt, j === live ? "live" : "held").toBe(T0 + 5 * HOUR);
      expect(now.version, j === live ? "live" : "held").toBe(2);
    }
  });
});
