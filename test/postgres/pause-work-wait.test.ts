import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { createIdGenerator } from "../../src/core/ids.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { jobMaker } from "../support/jobs.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { inserted } from "../support/pauses.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const DAY = 86_400_000;
const pg = usePostgresServer();

/**
 * runPauseWork while a keeper's pass holds the pause (its row locked by the pass's step, as
 * pause()'s background pass or another node's keeper holds it): it waits for that step and
 * then does the rest, so when it resolves the pause's work is done. It used to skip the
 * locked pause (SKIP LOCKED) and resolve at once with nothing held.
 */
describe("postgres: runPauseWork beside a keeper's pass", () => {
  let store: PostgresStore;
  beforeEach(async () => {
    store = await PostgresStore.open({ url: pg.url, schema: freshSchema("pausewait") });
  });
  afterEach(async () => {
    await store.close();
  });

  /** How many backends wait for a lock `pid` holds. */
  async function waitingOn(pid: number): Promise<number> {
    const { rows } = await store.connection.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`,
      [pid],
    );
    return rows[0]!.n;
  }

  it("waits for the pass holding the pause and returns with every job held", async () => {
    const makeJob = jobMaker(T0);
    const jobs = Array.from({ length: 30 }, (_, i) => makeJob(T0 + DAY + i, { tenant: "a" }));
    await store.jobsInsert({ jobs, now: T0 });
    const newId = createIdGenerator(() => T0);
    // the store's insert, so that no background pass of the Scheduler's starts
    const pause = inserted(
      await store.pauses.pauseInsert({
        pause: { id: newId(), tenant: "a", scope: { tenant: true }, onResume: "fire" },
        now: T0,
      }),
    );
    const scheduler = new Scheduler({ store, clock: new ManualClock(T0), defaultTenant: "a" });

    // a keeper's step in flight: its transaction holds the pause's row
    const keeper = await store.connection.connect();
    try {
      await keeper.query("BEGIN");
      await keeper.query(`SELECT id FROM "${store.schema}".pauses WHERE id = $1 FOR UPDATE`, [
        pause.id,
      ]);
      const pid = (await keeper.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!
        .pid;
      let settled = false;
      const work = scheduler.runPauseWork().finally(() => {
        settled = true;
      });
      // until runPauseWork waits for the keeper's lock, or has returned (the old code, at once)
      while (!settled && (await waitingOn(pid)) === 0) await new Promise(setImmediate);
      expect(settled).toBe(false);
      await keeper.query("COMMIT");
      expect(await work).toEqual({ held: 30, released: 0 });
    } finally {
      await keeper.query("ROLLBACK").catch(() => {});
      keeper.release();
    }
    expect(await scheduler.getPause(pause.id)).toMatchObject({
      holdComplete: true,
      heldJobs: 30,
    });
  });

  it("right after pause(), whose background pass runs beside it, the pause's work is done", async () => {
    const makeJob = jobMaker(T0);
    const jobs = Array.from({ length: 12_000 }, (_, i) => makeJob(T0 + DAY + i, { tenant: "a" }));
    for (let i = 0; i < jobs.length; i += 4000) {
      await store.jobsInsert({ jobs: jobs.slice(i, i + 4000), now: T0 });
    }
    const scheduler = new Scheduler({ store, clock: new ManualClock(T0), defaultTenant: "a" });
    const pause = await scheduler.pause({ scope: { tenant: true } });
    await scheduler.runPauseWork();
    expect(await scheduler.getPause(pause.id)).toMatchObject({
      holdComplete: true,
      heldJobs: 12_000,
    });
  });
});
