import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { SQL } from "../../src/stores/sqlite/statements.js";
import { tempDir } from "../support/temp-dir.js";

/**
 * Reads SQLite's plan for every statement on the firing path and fails on a full scan of
 * `jobs` or `hot`: the poll must be a range read of an index, whatever the backlog.
 */
const dir = tempDir();
let store: SqliteStore;

beforeAll(async () => {
  store = new SqliteStore({ path: join(dir.path, "plan.db") });
  // Some rows and ANALYZE statistics, so the planner chooses as it would on a real backlog.
  const now = Date.UTC(2026, 0, 1);
  const jobs = Array.from({ length: 2000 }, (_, i) => ({
    id: `01J${String(i).padStart(23, "0")}`,
    tenant: "default",
    key: i % 10 === 0 ? `k${i}` : null,
    dueAt: now + i * 60_000,
    bucket: Math.floor((now + i * 60_000) / 3_600_000) * 3_600_000,
    shard: 0,
    payload: { i },
    target: "t",
    targetOptions: null,
    maxAttempts: 3,
    expireAfterMs: null,
  }));
  await store.jobsInsert({ jobs, now });
  store.connection.exec("ANALYZE");
});
afterAll(async () => {
  await store.close();
  dir.cleanup();
});

function plan(sql: string, params: Record<string, unknown> | unknown[]): string[] {
  const stmt = store.connection.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const rows = (Array.isArray(params) ? stmt.all(...params) : stmt.all(params)) as {
    detail: string;
  }[];
  return rows.map((r) => r.detail);
}

/** A full scan shows as "SCAN jobs" / "SCAN hot" with no index named. */
function fullScans(details: string[]): string[] {
  return details.filter((d) => /^SCAN (jobs|hot)\b/.test(d) && !/USING (COVERING )?INDEX/.test(d));
}

const seqs = JSON.stringify([1, 2, 3]);

const cases: [string, string, Record<string, unknown> | unknown[], RegExp][] = [
  [
    "poll: due prefix of the hot index",
    SQL.hotDuePrefix,
    [Date.now(), 500],
    /SEARCH hot USING PRIMARY KEY \(due_at<\?\)/,
  ],
  [
    "claim: conditional update by seq",
    SQL.jobsClaim,
    { seqs, owner: "n", leaseUntil: 1, now: 1 },
    /SEARCH jobs USING INTEGER PRIMARY KEY/,
  ],
  [
    "settle: a batch of successes joined on the id index",
    SQL.settleSucceededMany,
    { now: 1, batch: "[]" },
    /SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 \(id=\?\)/,
  ],
  ["claim: delete the claimed prefix", SQL.hotDeletePrefix, [1, 1], /SEARCH hot USING PRIMARY KEY/],
  [
    "staging: read one bucket in seq order",
    SQL.stageRead,
    [0, 0, 100],
    /SEARCH jobs USING INDEX jobs_pending_bucket \(bucket=\? AND rowid>\?\)/,
  ],
  ["earliest due", SQL.hotEarliest, [], /SEARCH hot USING PRIMARY KEY/],
  ["lease sweep", SQL.leasesExpired, [1, 10], /jobs_claimed_lease/],
  ["idempotency key lookup", SQL.jobByLiveKey, ["default", "k1"], /jobs_live_key/],
  ["get by id", SQL.jobById, ["x"], /sqlite_autoindex_jobs_1|USING INDEX/],
  ["retention: oldest finished", SQL.historyOldest, [1, 10], /jobs_finished_at/],
  [
    "list: pending jobs of one bucket",
    SQL.listPendingInBucket,
    { bucket: 0, afterDue: 0, afterId: "", from: 0, to: 1e15, tenant: null, limit: 50 },
    /jobs_pending_bucket/,
  ],
  [
    "list: finished jobs by due time",
    SQL.listFinished,
    {
      afterDue: 0,
      afterId: "",
      from: 0,
      to: 1e15,
      tenant: null,
      limit: 50,
      statuses: '["succeeded"]',
    },
    /jobs_finished_due/,
  ],
  [
    "list: claimed jobs",
    SQL.listClaimed,
    { afterDue: 0, afterId: "", from: 0, to: 1e15, tenant: null, limit: 50 },
    /jobs_claimed_lease/,
  ],
];

describe("SQLite query plans", () => {
  it.each(cases)("%s uses an index, never a full scan", (_name, sql, params, expected) => {
    const details = plan(sql, params);
    expect(fullScans(details), details.join("\n")).toEqual([]);
    expect(details.join("\n")).toMatch(expected);
  });

  it("the check catches a full scan (a naive poll over the whole table)", () => {
    const naive = plan(
      "SELECT id FROM jobs WHERE status = 'pending' AND due_at <= ? ORDER BY due_at LIMIT 500",
      [Date.now()],
    );
    expect(fullScans(naive)).not.toEqual([]);
  });

  it("the 'hot' poll plan reads no row of jobs at all", () => {
    const details = plan(SQL.hotDuePrefix, [Date.now(), 500]);
    expect(details.some((d) => /\bjobs\b/.test(d))).toBe(false);
  });
});
