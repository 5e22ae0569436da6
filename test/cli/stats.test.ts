import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import { openStore } from "../../src/stores/open-store.js";
import { succeededIn } from "../../src/cli/commands/stats.js";
import { cli, cliJson, ensureBuilt, tempWorkspace } from "./helpers.js";

const HOUR = 3_600_000;

interface StatsJson {
  counts: Record<string, number>;
  bucketWidthMs: number;
  buckets: { bucket: number; pending: number }[];
  pendingBeyondBuckets: number;
  lateness: { count: number; early: number; complete: boolean; limit: number; windowMs: number };
}

beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

/** `n` jobs that fired `lateMs` late, due in the last hour (written through the store). */
async function firedJobs(db: string, n: number, lateMs: number): Promise<void> {
  const store = await openStore(db);
  const due = Date.now() - HOUR / 2;
  let t = due;
  const newId = createIdGenerator(() => t++);
  const jobs = Array.from({ length: n }, () => {
    return {
      id: newId(),
      tenant: "default",
      key: null,
      dueAt: due,
      payload: null,
      target: "t",
      targetOptions: null,
      maxAttempts: 1,
      expireAfterMs: null,
    };
  });
  await store.jobsInsert({ jobs, now: due });
  await store.bucketsStage({ until: due + HOUR, maxRows: n });
  const claims = await store.jobsClaimDue({
    now: due + lateMs,
    dueBefore: due,
    limit: n,
    leaseMs: 60_000,
    owner: "test",
  });
  expect(claims).toHaveLength(n);
  await store.jobsSettle({
    now: due + lateMs,
    settlements: claims.map((c) => ({
      id: c.id,
      fence: c.fence,
      firedAt: due + lateMs,
      outcome: "succeeded" as const,
      result: null,
    })),
  });
  await store.close();
}

describe("duetime stats", () => {
  it("says when lateness was measured on fewer jobs than fired (--lateness-limit)", async () => {
    await firedJobs(ws.db, 25, 7);
    const all = await cliJson<StatsJson>(["stats", "--db", ws.db]);
    expect(all.code).toBe(0);
    expect(all.body.lateness).toMatchObject({
      count: 25,
      complete: true,
      limit: 10_000,
      windowMs: 24 * HOUR,
      early: 0,
      p50: 7,
    });
    const some = await cliJson<StatsJson>(["stats", "--db", ws.db, "--lateness-limit", "10"]);
    expect(some.body.lateness).toMatchObject({ count: 10, complete: false, limit: 10 });
    // exactly as many as fired is complete: nothing was left out
    const exact = await cliJson<StatsJson>(["stats", "--db", ws.db, "--lateness-limit", "25"]);
    expect(exact.body.lateness).toMatchObject({ count: 25, complete: true, limit: 25 });
    const text = await cli(["stats", "--db", ws.db, "--lateness-limit", "10"]);
    expect(text.stdout).toContain(
      "lateness of 10 jobs due in the last 24 h and fired (succeeded or dead; only the earliest due 10: more fired, see --lateness-limit)",
    );
    const bad = await cli(["stats", "--db", ws.db, "--lateness-limit", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--lateness-limit: expected an integer from 1 to 10000000");
  });

  it("counts jobs by state and shows pending jobs per bucket as numbers and bars", async () => {
    // Three jobs in the bucket two hours ahead, one in the next, one cancelled, and one a
    // year ahead (beyond the histogram's 48 buckets).
    const b1 = Math.floor(Date.now() / HOUR) * HOUR + 2 * HOUR;
    const b2 = b1 + HOUR;
    const at = (t: number): string => new Date(t).toISOString();
    const add = (t: number): Promise<{ code: number; body: { job: { id: string } } }> =>
      cliJson(["add", at(t), "--target", "t", "--db", ws.db]);
    for (const t of [b1 + 60_000, b1 + 120_000, b1 + HOUR - 1, b2])
      expect((await add(t)).code).toBe(0);
    const gone = await add(b2 + 5 * 60_000);
    expect((await cli(["cancel", gone.body.job.id, "--db", ws.db])).code).toBe(0);
    await add(b1 + 365 * 24 * HOUR);

    const { code, body } = await cliJson<StatsJson>(["stats", "--db", ws.db]);
    expect(code).toBe(0);
    expect(body.counts).toMatchObject({ pending: 5, cancelled: 1, claimed: 0, succeeded: 0 });
    expect(body.bucketWidthMs).toBe(HOUR);
    expect(body.buckets).toEqual([
      { bucket: b1, pending: 3 },
      { bucket: b2, pending: 1 },
    ]);
    expect(body.pendingBeyondBuckets).toBe(1);
    expect(body.lateness).toMatchObject({ count: 0, early: 0 });

    const text = await cli(["stats", "--db", ws.db, "--tz", "UTC"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^\s+pending\s+5$/m);
    expect(text.stdout).toMatch(/^\s+cancelled\s+1$/m);
    const label = (t: number): string => at(t).slice(0, 16).replace("T", " ");
    const row1 = text.stdout.split("\n").find((l) => l.includes(`${label(b1)} UTC`));
    const row2 = text.stdout.split("\n").find((l) => l.includes(`${label(b2)} UTC`));
    expect(row1).toMatch(/ 3 {2}(█+)$/);
    expect(row2).toMatch(/ 1 {2}(█+[▏▎▍▌▋▊▉]?)$/);
    // Bars are proportional: 3 jobs -> 40 cells, 1 job -> a third of that.
    expect(row1!.match(/█/g)).toHaveLength(40);
    expect(row2!.match(/█/g)).toHaveLength(13);
    expect(text.stdout).toContain("+ 1 pending further ahead");
  });

  it("shows overdue buckets that still hold work (the catch-up backlog)", async () => {
    const past = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
    await cli(["add", new Date(past + 1000).toISOString(), "--target", "t", "--db", ws.db]);
    const { body } = await cliJson<StatsJson>(["stats", "--db", ws.db]);
    expect(body.buckets).toEqual([{ bucket: past, pending: 1 }]);
    const text = await cli(["stats", "--db", ws.db]);
    expect(text.stdout).toMatch(/ 1 {2}█+ {2}overdue$/m);
  });

  it("uses the granularity given for a new database, and adopts it when reopened", async () => {
    const added = await cli([
      "add",
      "in 3 minutes",
      "--target",
      "t",
      "--db",
      ws.db,
      "--granularity",
      "minute",
    ]);
    expect(added.code).toBe(0);
    const { body } = await cliJson<StatsJson>(["stats", "--db", ws.db]);
    expect(body.bucketWidthMs).toBe(60_000);
    expect(body.buckets).toHaveLength(1);
    const text = await cli(["stats", "--db", ws.db]);
    expect(text.stdout).toContain("pending jobs per bucket (minute buckets");
    const wrong = await cli(["stats", "--db", ws.db, "--granularity", "day"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /^error: --granularity: expected "minute" \(the granularity this database was created with\), received "day"$/m,
    );
  });
});

describe("stats --url reading a server's per-minute outcomes", () => {
  it("counts `succeeded`, and `fired` from a server of 0.1 that sends only the old name", () => {
    const minute = { minute: "2026-03-01T10:00:00.000Z", failed: 1, dead: 0, expired: 0 };
    expect(
      succeededIn([
        { ...minute, succeeded: 2, fired: 2 },
        { ...minute, succeeded: 3 },
      ]),
    ).toBe(5);
    expect(
      succeededIn([
        { ...minute, fired: 4 },
        { ...minute, fired: 1 },
      ]),
    ).toBe(5);
  });
});
