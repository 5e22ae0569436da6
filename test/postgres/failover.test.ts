import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import type { Job } from "../../src/core/job.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema } from "../support/postgres-server.js";
import { startPostgresPair, type PostgresPair } from "../support/postgres-standby.js";
import { jobMaker } from "./helpers.js";

const T0 = Date.UTC(2026, 6, 1, 9, 0, 0);

/**
 * A primary with a synchronous standby; the store is given both hosts with
 * target_session_attrs=read-write. The primary is SIGKILLed while writes are in flight and
 * the standby promoted: every insert the store acknowledged is on the promoted standby, and
 * the pool and the LISTEN connection both find it without being reopened.
 */
describe("postgres: failover to a synchronous standby", () => {
  let pair: PostgresPair;
  beforeAll(async () => {
    pair = await startPostgresPair({ synchronous: true });
  }, 60_000);
  afterAll(async () => {
    await pair?.stop();
  });

  it("loses no acknowledged write; pool and LISTEN follow the promotion", async () => {
    const schema = freshSchema("failover");
    const errors: Error[] = [];
    const store = await PostgresStore.open({
      url: pair.url,
      schema,
      poolSize: 4,
      onError: (e) => errors.push(e),
    });
    try {
      const job = jobMaker(T0);
      const heard: number[] = [];
      store.onEarlierDue((dueAt) => heard.push(dueAt));
      await store.listening();

      // Claimed before the kill: in flight across the failover.
      await store.jobsInsert({ jobs: [job(T0), job(T0)], now: T0 });
      const inFlight = await store.jobsClaimDue({
        now: T0,
        dueBefore: T0,
        limit: 10,
        leaseMs: 60_000,
        owner: "node-a",
      });
      expect(inFlight).toHaveLength(2);

      // A writer inserting 20 jobs at a time until told to stop; what it was told succeeded
      // is what was acknowledged.
      const acked: string[] = [];
      const failures: string[] = [];
      let stop = false;
      const writer = (async () => {
        while (!stop) {
          const batch = Array.from({ length: 20 }, () => job(T0 + 3_600_000));
          try {
            await store.jobsInsert({ jobs: batch, now: T0 });
            acked.push(...batch.map((j) => j.id));
          } catch (err) {
            failures.push(messages(err));
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      })();
      while (acked.length < 200) await new Promise((r) => setTimeout(r, 5));

      await pair.killPrimary();
      // Primary dead, standby not promoted: no host takes writes, and the store says so. A
      // query that went out on a pooled connection before the pool saw it die fails as a lost
      // connection instead (a loaded machine shows it): each refusal is one of the two, and the
      // store comes to "no writable host" within a bounded number of tries.
      const refusals: string[] = [];
      for (let i = 0; i < 20; i++) {
        const refusal = await store.jobsCountByStatus({}).then(
          () => "answered",
          (e: unknown) => messages(e),
        );
        refusals.push(refusal);
        if (/no writable PostgreSQL host.*is read-only/s.test(refusal)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(refusals.at(-1)).toMatch(/no writable PostgreSQL host.*is read-only/s);
      for (const r of refusals) {
        expect(r).toMatch(/no writable PostgreSQL host|terminat|ECONNRESET|ECONNREFUSED/);
      }
      const ackedBeforePromotion = acked.length;
      await pair.promote();
      const afterPromotion = acked.length;
      while (acked.length < afterPromotion + 200) await new Promise((r) => setTimeout(r, 5));
      stop = true;
      await writer;

      expect(failures.length).toBeGreaterThan(0);
      expect(ackedBeforePromotion).toBeGreaterThanOrEqual(200);
      // Every acknowledged id is in the promoted standby, read directly.
      const direct = new pg.Client({ connectionString: pair.standby.url });
      await direct.connect();
      try {
        const { rows } = await direct.query<{ n: string }>(
          `SELECT count(*) AS n FROM "${schema}".jobs_live WHERE id = ANY($1)`,
          [acked],
        );
        expect(Number(rows[0]!.n)).toBe(acked.length);
      } finally {
        await direct.end();
      }

      // The claims made before the kill hold on the new primary and settle normally.
      const settled = await store.jobsSettle({
        now: T0 + 1000,
        settlements: inFlight.map((j: Job) => ({
          id: j.id,
          fence: j.fence,
          firedAt: T0 + 1000,
          outcome: "succeeded" as const,
          result: null,
        })),
      });
      expect(settled).toEqual([true, true]);

      // The LISTEN connection reconnected to the promoted standby (it says so with a 0),
      // and hears a write made through another store on it.
      while (!heard.includes(0)) await new Promise((r) => setTimeout(r, 10));
      await store.listening();
      const other = await PostgresStore.open({ url: pair.url, schema, poolSize: 1 });
      try {
        await other.jobsInsert({ jobs: [job(T0 + 5000)], now: T0 });
      } finally {
        await other.close();
      }
      while (!heard.includes(T0 + 5000)) await new Promise((r) => setTimeout(r, 10));
      expect(errors.some((e) => /LISTEN connection/.test(e.message))).toBe(true);
    } finally {
      await store.close();
    }
  }, 60_000);
});

/** An error's message with its causes', for matching. */
function messages(err: unknown): string {
  const out: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) out.push(e.message);
  return out.join(": ");
}
