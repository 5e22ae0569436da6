import { describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { OutcomesNotRecordedError } from "../../src/core/errors.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { silentLogger } from "../support/harness.js";
import { expectHeldUntilLease, gatedHandler } from "../support/jobs.js";
import { dropSchema, freshSchema, usePostgresServer } from "../support/postgres-server.js";

/**
 * Issue 11 §4: stopping always finishes its steps and reports errors at the end, and the
 * settler's retries are bounded by the stop timeout. Real PostgreSQL made to fail: a trigger
 * refusing the shard-lease DELETE, or the server stopped.
 */
// halts or restarts its server: one of its own, not its worker's shared one
const pg = usePostgresServer({ own: true });

/** Every error in `err`: itself, an AggregateError's members, and their causes. */
function errorsIn(err: unknown): Error[] {
  const out: Error[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!(e instanceof Error) || depth > 10) return;
    out.push(e);
    if (e instanceof AggregateError) for (const x of e.errors) visit(x, depth + 1);
    visit(e.cause, depth + 1);
  };
  visit(err, 0);
  return out;
}

async function openStore(schema: string) {
  return PostgresStore.open({ url: pg.url, schema, shardCount: 4, poolSize: 4 });
}

describe("stop() on PostgreSQL when the database fails part of it", () => {
  it("finishes every step when handing back the shard leases fails: handlers aborted, outcomes recorded, store closed, the error reported at the end", async () => {
    const schema = freshSchema("stop");
    const store = await openStore(schema);
    const scheduler = new Scheduler({ store, logger: silentLogger, nodeId: "stopper" });
    let signal: AbortSignal | null = null;
    const started = new Promise<void>((resolve) =>
      scheduler.handle("t", (job, ctx) => {
        signal = ctx.signal;
        resolve();
        // honours the abort, as a well-behaved handler does
        return new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(new Error("aborted"))),
        );
      }),
    );
    const { job } = await scheduler.schedule({ dueAt: Date.now() - 1000, target: "t" });
    scheduler.start();
    await started;
    // From now on the database refuses to delete shard leases (the clean stop's statement).
    await store.connection.query(`
      CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'shard leases may not be deleted now'; END $$;
      CREATE TRIGGER refuse BEFORE DELETE ON "${schema}".shard_leases
        FOR EACH STATEMENT EXECUTE FUNCTION "${schema}".refuse();`);

    const closed = await scheduler.close({ timeoutMs: 300 }).then(
      () => null,
      (err: unknown) => err,
    );
    // the running handler was waited for, then aborted (before, stop() rejected first)
    expect(signal!.aborted).toBe(true);
    // the store is closed (before, close() never got there)
    await expect(store.connection.query("SELECT 1")).rejects.toThrow(/end/);
    // the failure is reported, once everything else is done
    const messages = errorsIn(closed).map((e) => e.message);
    expect(messages).toContain("stopping the node services");
    expect(messages).toContain("handing back the shard leases of stopper");
    expect(messages).toContain("shard leases may not be deleted now");
    // and the handler's outcome was recorded: the job is no longer claimed
    const after = await openStore(schema);
    try {
      const row = await after.jobGet({ id: job.id });
      expect(row?.status).not.toBe("claimed");
      expect(row?.status).toBeDefined();
    } finally {
      await after.close();
      await dropSchema(pg.url, schema);
    }
  });

  it("gives up recording outcomes while PostgreSQL is down once its timeout is spent, says how many, and leaves their jobs to their leases", async (ctx) => {
    if (!pg.server.owned) ctx.skip(); // PG_URL names a server this test cannot stop
    const schema = freshSchema("stopdown");
    const store = await openStore(schema);
    const scheduler = new Scheduler({
      store,
      logger: silentLogger,
      nodeId: "downed",
      leaseMs: 60_000,
    });
    const { started, finish } = gatedHandler(scheduler);
    const { job } = await scheduler.schedule({ dueAt: Date.now() - 1000, target: "t" });
    try {
      scheduler.start();
      await started;
      await pg.server.halt();
      finish(); // the handler returns: its outcome cannot be written now

      const began = Date.now();
      const closed = await scheduler.close({ timeoutMs: 500 }).then(
        () => null,
        (err: unknown) => err,
      );
      const tookMs = Date.now() - began;
      // Before, close() retried the write forever: this never returned.
      const notRecorded = errorsIn(closed).find((e) => e instanceof OutcomesNotRecordedError);
      expect(notRecorded).toBeInstanceOf(OutcomesNotRecordedError);
      expect((notRecorded as OutcomesNotRecordedError).count).toBe(1);
      expect(notRecorded!.message).toMatch(/^1 job outcome could not be recorded/);
      // bounded by the timeout plus the least time given to the last writes (1 s) and slack
      expect(tookMs).toBeLessThan(500 + 1000 + 3000);
      console.log(`close() with the database down returned after ${tookMs} ms`);
    } finally {
      await pg.server.resume();
    }
    // The job is still claimed by the stopped node, until its lease runs out; then it is
    // due again (the sweeper of any node puts it back).
    const after = await openStore(schema);
    try {
      const held = await expectHeldUntilLease(after, job.id);
      expect(held.leaseOwner).toMatch(/^downed/);
    } finally {
      await after.close();
      await dropSchema(pg.url, schema);
    }
  });
});
