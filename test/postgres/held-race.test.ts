import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { statements } from "../../src/stores/postgres/statements.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { inserted } from "../support/pauses.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;
const pg = usePostgresServer();

/**
 * A held job changed while its pause's release runs (pending-rows.ts movePending): the
 * reschedule's transaction holds the row when the release's delete reaches it; the release
 * waits, then gives back the row as the reschedule left it. A row deleted and inserted
 * again instead would be missed by that release and stay held by a resumed pause.
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

  it("the release waits for the reschedule and gives the job back at its new time", async () => {
    const newId = createIdGenerator(() => T0);
    const [r] = await store.jobsInsert({
      jobs: [
        {
          id: newId(),
          tenant: "a",
          key: null,
          dueAt: T0 + HOUR,
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
        pause: { id: newId(), tenant: "a", scope: { tenant: true }, onResume: "fire" },
        now: T0,
      }),
    );
    while ((await store.pauses.pausesWork({ now: T0, limit: 10 })).more);
    expect(await store.jobGet({ id: job.id })).toMatchObject({ pausedBy: pause.id });
    await store.pauses.pauseResume({ id: pause.id, now: T0 + 1000 });

    const tx = await store.connection.connect();
    try {
      await tx.query("BEGIN");
      const moved = await tx.query(statements(store.schema).reschedule, [
        job.shard,
        job.id,
        null,
        null,
        T0 + 2 * HOUR,
        T0 + 2 * HOUR,
        T0 + 1000,
      ]);
      expect(moved.rows).toHaveLength(1);
      const release = store.pauses.pausesWork({ now: T0 + 1000, limit: 10 });
      await someoneWaits();
      await tx.query("COMMIT");
      await release;
    } finally {
      tx.release();
    }
    while ((await store.pauses.pausesWork({ now: T0 + 1000, limit: 10 })).more);
    expect(await store.pauses.pauseGet({ id: pause.id })).toMatchObject({
      state: "resumed",
      heldJobs: 0,
    });
    expect(await store.jobGet({ id: job.id })).toMatchObject({
      status: "pending",
      pausedBy: null,
      dueAt: T0 + 2 * HOUR,
    });
  });
});
