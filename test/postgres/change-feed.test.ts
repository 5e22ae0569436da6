import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { parseChangeCursor, type StoredChange } from "../../src/core/change.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { jobMaker } from "./helpers.js";

const server = usePostgresServer();
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

/**
 * The PostgreSQL feed's ordering: a transaction that started writing before another one
 * committed, and commits after it, must neither be skipped by a reader that already read the
 * other one's change, nor be read before it commits.
 */
describe("postgres change feed across writers", () => {
  const opened: { end(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const o of opened.splice(0)) await o.end();
  });

  async function twoNodes(): Promise<[PostgresStore, PostgresStore, string]> {
    const schema = freshSchema("feed");
    const a = await PostgresStore.open({ url: server.url, schema, poolSize: 2 });
    const b = await PostgresStore.open({ url: server.url, schema, poolSize: 2 });
    opened.push({ end: () => a.close() }, { end: () => b.close() });
    return [a, b, schema];
  }

  it("holds a later commit back until an earlier-started writer commits, then reads both once", async () => {
    const [writer, reader, schema] = await twoNodes();
    const make = jobMaker(T0);
    const job = (o: { dueAt: number }) => make(o.dueAt, { tenant: "acme" });
    const slow = new pg.Client({ connectionString: server.url });
    await slow.connect();
    opened.push(slow);
    // The slow writer takes its transaction id first (as a multi-statement write does).
    await slow.query("BEGIN");
    await slow.query("SELECT pg_current_xact_id()");
    const start = await reader.changesRead({ tenant: "acme", limit: 100 });
    const [fast] = await writer.jobsInsert({ jobs: [job({ dueAt: T0 + 60_000 })], now: T0 });
    // The fast write has committed, but the slow writer may still write below it in feed
    // order: the reader must not hand it out yet, or it would step past the slow one.
    const held = await reader.changesRead({
      tenant: "acme",
      after: parseChangeCursor(start.next),
      limit: 100,
    });
    expect(held.changes).toEqual([]);
    await slow.query(
      `INSERT INTO "${schema}".job_changes (tenant, job_id, kind, status, due_at, attempts, at)
       VALUES ('acme', 'slow-job', 'scheduled', 'pending', $1, 0, $2)`,
      [T0 + 1, T0],
    );
    await slow.query("COMMIT");
    const seen: StoredChange[] = [];
    let after = held.next;
    for (let i = 0; i < 3; i++) {
      const page = await reader.changesRead({
        tenant: "acme",
        after: parseChangeCursor(after),
        limit: 100,
      });
      seen.push(...page.changes);
      after = page.next;
    }
    expect(seen.map((c) => c.id)).toEqual(["slow-job", fast!.job.id]);
  });

  it("gives every node the changes of every other, in one order", async () => {
    const [a, b] = await twoNodes();
    const make = jobMaker(T0);
    const job = (o: { dueAt: number }) => make(o.dueAt, { tenant: "acme" });
    await a.jobsInsert({ jobs: [job({ dueAt: T0 + 1 })], now: T0 });
    await b.jobsInsert({ jobs: [job({ dueAt: T0 + 2 })], now: T0 });
    const claimed = await b.jobsClaimDue({
      now: T0 + 5,
      dueBefore: T0 + 5,
      limit: 10,
      leaseMs: 1000,
      owner: "b",
    });
    await a.jobsSettle({
      now: T0 + 6,
      settlements: claimed.map((j) => ({
        id: j.id,
        fence: j.fence,
        firedAt: T0 + 5,
        outcome: "succeeded" as const,
        result: null,
      })),
    });
    const fromA = await a.changesRead({ tenant: "acme", limit: 100 });
    const fromB = await b.changesRead({ tenant: "acme", limit: 100 });
    expect(fromA.changes.map((c) => c.kind)).toEqual([
      "scheduled",
      "scheduled",
      "claimed",
      "claimed",
      "succeeded",
      "succeeded",
    ]);
    expect(fromB).toEqual(fromA);
  });
});
