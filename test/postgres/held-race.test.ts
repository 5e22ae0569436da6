import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bucketOf } from "../../src/core/buckets.js";
import { createIdGenerator } from "../../src/core/ids.js";
import type { Job } from "../../src/core/job.js";
import type { OnResume } from "../../src/core/pause.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { statements } from "../../src/stores/postgres/statements.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { inserted } from "../support/pauses.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;
/** The resume, 1 s after the pause: the paused duration a shift adds. */
const RESUMED = T0 + 1000;
const pg = usePostgresServer();

/**
 * A held job changed while its pause's release runs (pending-rows.ts movePending): the
 * reschedule's transaction holds the row when the release reaches it; the release waits, then
 * gives back the row as the reschedule left it, deciding by the pause's policy from its new
 * due time. A row deleted and inserted again instead would be missed by that release and stay
 * held by a resumed pause; a decision from the due time read before the wait would shift or
 * expire the job by a time it no longer has.
 */
describe("postgres: a held job rescheduled during its pause's release", () => {
  let store: PostgresStore;
  beforeEach(async () => {
    store = await PostgresStore.open({ url: pg.url, schema: freshSchema("heldrace") });
  });
  afterEach(async () => {
    await store.close();
  });

  /** Resolves once some backend of the server waits for a lock. */
  async function someoneWaits(): Promise<void> {
    for (let i = 0; i < 2000; i++) {
      const { rows } = await store.connection.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`,
      );
      if (rows[0]!.n > 0) return;
      await new Promise((r) => setImmediate(r));
    }
    throw new Error("no backend ever waited for a lock");
  }

  /**
   * A job due `dueAt`, held by a tenant pause with `onResume`, resumed at RESUMED; its
   * release's first pass runs while a reschedule to `movedTo` holds the row, which commits
   * once the release waits. The job as the release left it.
   */
  async function releasedDuringReschedule(
    onResume: OnResume,
    dueAt: number,
    movedTo: number,
  ): Promise<Job> {
    const newId = createIdGenerator(() => T0);
    const [r] = await store.jobsInsert({
      jobs: [
        {
          id: newId(),
          tenant: "a",
          key: null,
          dueAt,
          payload: null,
          target: "mail",
          targetOptions: null,
          maxAttempts: 3,
          expireAfterMs: null,
        },
      ],
      now: T0,
    });
    const job = r!.job;
    const pause = inserted(
      await store.pauses.pauseInsert({
        pause: { id: newId(), tenant: "a", scope: { tenant: true }, onResume },
        now: T0,
      }),
    );
    while ((await store.pauses.pausesWork({ now: T0, limit: 10 })).more);
    expect(await store.jobGet({ id: job.id })).toMatchObject({ pausedBy: pause.id });
    await store.pauses.pauseResume({ id: pause.id, now: RESUMED });

    const tx = await store.connection.connect();
    try {
      await tx.query("BEGIN");
      const moved = await tx.query(statements(store.schema).reschedule, [
        job.shard,
        job.id,
        null,
        null,
        movedTo,
        bucketOf(movedTo, store.bucketWidthMs),
        RESUMED,
      ]);
      expect(moved.rows).toHaveLength(1);
      const release = store.pauses.pausesWork({ now: RESUMED, limit: 10 });
      await someoneWaits();
      await tx.query("COMMIT");
      await release;
    } finally {
      tx.release();
    }
    while ((await store.pauses.pausesWork({ now: RESUMED, limit: 10 })).more);
    expect(await store.pauses.pauseGet({ id: pause.id })).toMatchObject({
      state: "resumed",
      heldJobs: 0,
    });
    return (await store.jobGet({ id: job.id }))!;
  }

  it("the release waits for the reschedule and gives the job back at its new time", async () => {
    const job = await releasedDuringReschedule("fire", T0 + HOUR, T0 + 2 * HOUR);
    expect(job).toMatchObject({ status: "pending", pausedBy: null, dueAt: T0 + 2 * HOUR });
  });

  it("shift: moved past the resume it is not shifted; moved before it, it is", async () => {
    const later = await releasedDuringReschedule("shift", T0 + 500, T0 + 2 * HOUR);
    expect(later).toMatchObject({ status: "pending", pausedBy: null, dueAt: T0 + 2 * HOUR });
    const earlier = await releasedDuringReschedule("shift", T0 + HOUR, T0 + 500);
    expect(earlier).toMatchObject({ status: "pending", pausedBy: null, dueAt: T0 + 1500 });
  });

  it("expire: moved past the resume it stays pending; moved before it, it expires", async () => {
    const later = await releasedDuringReschedule("expire", T0 + 500, T0 + 2 * HOUR);
    expect(later).toMatchObject({ status: "pending", pausedBy: null, dueAt: T0 + 2 * HOUR });
    const earlier = await releasedDuringReschedule("expire", T0 + 2 * HOUR, T0 + 500);
    expect(earlier).toMatchObject({ status: "expired", dueAt: T0 + 500 });
  });
});
