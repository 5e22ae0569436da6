import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { SQL } from "../../src/stores/sqlite/statements.js";
import { tempDir } from "../support/temp-dir.js";

/**
 * Reads SQLite's plan for every statement on the firing path and fails on a full scan of
 * `jobs`, `hot` or `finished`: the poll must be a range read of an index, whatever the
 * backlog.
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

/**
 * A full scan shows as "SCAN <table>" with no index named, for the tables that grow with
 * the backlog or the history: jobs (alias j), hot, finished (alias f). A scan of `claims`
 * (as many rows as jobs in flight) is allowed.
 */
function fullScans(details: string[]): string[] {
  return details.filter(
    (d) => /^SCAN (?:jobs|j|hot|finished|f)\b/.test(d) && !/USING (?:COVERING )?INDEX/.test(d),
  );
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
    "claim: read the named rows by seq",
    SQL.claimRead,
    { entries: "[[1, 1], [2, 2]]" },
    /SEARCH j USING INTEGER PRIMARY KEY \(rowid=\?\)/,
  ],
  [
    "claim: lease rows for the named seqs",
    SQL.claimInsert,
    { seqs, owner: "n", leaseUntil: 1, now: 1 },
    /SEARCH j USING INTEGER PRIMARY KEY \(rowid=\?\)/,
  ],
  [
    "settle: a batch of successes read from the claims alone",
    SQL.settleSucceededMany,
    { now: 1, batch: "[]" },
    /SEARCH c USING PRIMARY KEY \(id=\?\)/,
  ],
  [
    "settle: the claim a settlement names",
    SQL.claimOf,
    ["x", 1],
    /SEARCH claims USING PRIMARY KEY \(id=\?\)/,
  ],
  ["claim: delete the claimed prefix", SQL.hotDeletePrefix, [1, 1], /SEARCH hot USING PRIMARY KEY/],
  [
    "staging: where a chunk of one bucket ends",
    SQL.stageChunkEnd,
    { bucket: 0, after: 0, budget: 100 },
    /SEARCH jobs USING COVERING INDEX jobs_bucket \(bucket=\? AND seq>\?\)/,
  ],
  [
    "staging: copy a chunk of one bucket from the index alone",
    SQL.stageCopy,
    { bucket: 0, after: 0, upTo: 100 },
    /SEARCH jobs USING COVERING INDEX jobs_bucket \(bucket=\? AND seq>\? AND seq<\?\)/,
  ],
  ["earliest due", SQL.hotEarliest, [], /SEARCH hot USING PRIMARY KEY/],
  [
    "poll of a shard set: the hot index in order, each entry's job by seq",
    SQL.hotDuePrefixOfShards,
    { dueBefore: Date.now(), limit: 500, shards: "[0, 2]" },
    /SEARCH h USING PRIMARY KEY \(due_at<\?\)/,
  ],
  [
    "shared claim of a shard set: one tenant's due prefix, each entry's job by seq",
    SQL.hotTenantDuePrefixOfShards,
    { tenant: "default", dueBefore: Date.now(), limit: 500, shards: "[0, 2]" },
    /SEARCH h USING COVERING INDEX hot_tenant \(tenant=\? AND due_at<\?\)/,
  ],
  ["lease sweep", SQL.leasesExpired, [1, 10], /SEARCH c USING INDEX claims_lease/],
  [
    "idempotency key lookup",
    SQL.jobByLiveKey,
    ["default", "k1"],
    /SEARCH live_keys USING PRIMARY KEY/,
  ],
  ["get by id", SQL.jobById, ["x"], /SEARCH j USING INDEX sqlite_autoindex_jobs_1 \(id=\?\)/],
  [
    "list: pending jobs of one bucket",
    SQL.listPendingInBucket,
    { bucket: 0, afterDue: 0, afterId: "", from: 0, to: 1e15, tenant: null, limit: 50 },
    /SEARCH j USING INDEX jobs_bucket/,
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
    /SEARCH f USING INDEX finished_due/,
  ],
  [
    "bulk batch of a tag: the tag's walk index in order, each entry's job by seq",
    SQL.operationStateByTagWalk,
    { tenant: "default", tag: "t", afterBucket: 0, afterId: "", limit: 500 },
    /SEARCH job_tags USING COVERING INDEX job_tags_walk \(tenant=\? AND tag=\? AND \(walk_bucket,job_id\)>\(\?,\?\)\)[\s\S]+SEARCH j USING INTEGER PRIMARY KEY \(rowid=\?\)/,
  ],
  [
    "erase: a job's feed rows written outside a tag walk",
    SQL.changesDeleteByJob,
    ["x", "default"],
    /SEARCH changes USING INDEX changes_job \(job_id=\?\)/,
  ],
  [
    "erase: a job's feed rows a tag walk wrote",
    SQL.changesDeleteByJobWalk,
    [0, "x", "default"],
    /SEARCH changes USING INDEX changes_walk \(walk_bucket=\? AND job_id=\?\)/,
  ],
  [
    "list: claimed jobs",
    SQL.listClaimed,
    { afterDue: 0, afterId: "", from: 0, to: 1e15, tenant: null, limit: 50 },
    /SCAN c\b[\s\S]+SEARCH j USING INTEGER PRIMARY KEY/,
  ],
];

describe("SQLite query plans", () => {
  it.each(cases)("%s uses an index, never a full scan", (_name, sql, params, expected) => {
    const details = plan(sql, params);
    expect(fullScans(details), details.join("\n")).toEqual([]);
    expect(details.join("\n")).toMatch(expected);
  });

  it("retention reads finished from its first row in finish order and stops after the limit", () => {
    // The one scan allowed: rowid order, LIMIT n, so it reads n rows whatever the history.
    const details = plan(SQL.historyOldest, [10]);
    expect(details.join("\n")).toMatch(/^SCAN f\b/m);
    expect(details.join("\n")).not.toMatch(/TEMP B-TREE/);
  });

  it("the earliest due of a shard set walks hot in key order and stops at the first of them", () => {
    // A scan in primary-key order with LIMIT 1 (no sort): it reads the entries of other
    // shards ahead of the first one of the set, each job found by its seq.
    const details = plan(SQL.hotEarliestOfShards, { shards: "[1]" });
    expect(details.join("\n")).toMatch(/^SCAN h\b/m);
    expect(details.join("\n")).toMatch(/SEARCH j USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expect(details.join("\n")).not.toMatch(/TEMP B-TREE/);
  });

  it("the check catches a full scan (a naive poll over the whole table)", () => {
    const naive = plan("SELECT id FROM jobs WHERE due_at <= ? ORDER BY due_at LIMIT 500", [
      Date.now(),
    ]);
    expect(fullScans(naive)).not.toEqual([]);
  });

  it("the 'hot' poll plan reads no row of jobs at all", () => {
    const details = plan(SQL.hotDuePrefix, [Date.now(), 500]);
    expect(details.some((d) => /\bjobs\b/.test(d))).toBe(false);
  });
});
