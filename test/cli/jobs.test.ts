import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SCHEMAS } from "../../src/service/openapi-schemas.js";
import { cli, cliAll, cliJson, ensureBuilt, tempWorkspace, wallParts } from "./helpers.js";

interface JobJson {
  id: string;
  status: string;
  /** ISO, as the HTTP API shows it (the one JSON view of a job). */
  dueAt: string;
  target: string;
  key: string | null;
  payload: unknown;
  tenant: string;
  maxAttempts: number;
  expireAfterMs: number | null;
  version: number;
}
interface AddJson {
  created: boolean;
  job: JobJson;
  dueAtIso: string;
  dueAtLocal: string;
  timeZone: string;
}

const HOUR = 3_600_000;

beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

const add = (when: string, ...flags: string[]) =>
  cliJson<AddJson>(["add", when, "--db", ws.db, "--target", "remind", ...flags]);

describe("duetime add", () => {
  it("takes an ISO time with an offset", async () => {
    const { code, body } = await add("2030-01-02T03:04:05+01:00");
    expect(code).toBe(0);
    expect(body.created).toBe(true);
    expect(body.job.dueAt).toBe("2030-01-02T02:04:05.000Z");
    expect(body.dueAtIso).toBe("2030-01-02T02:04:05.000Z");
    // the store's internals stay out of the JSON, as in the HTTP API's
    for (const internal of ["bucket", "shard", "leaseOwner", "fence", "targetOptions"]) {
      expect(body.job).not.toHaveProperty(internal);
    }
    expect(body.job.status).toBe("pending");
    expect(body.job.target).toBe("remind");
  });

  it("reads an ISO time without an offset as a wall time in --tz, and words in --locale", async () => {
    const wall = await add("2030-07-01T09:30", "--tz", "Europe/Paris");
    expect(wall.code).toBe(0);
    expect(wall.body.dueAtIso).toBe("2030-07-01T07:30:00.000Z");
    const french = await add("demain à 9h", "--tz", "Europe/Paris", "--locale", "fr");
    expect(french.code).toBe(0);
    const w = wallParts(Date.parse(french.body.job.dueAt), "Europe/Paris");
    expect([w.hour, w.minute]).toEqual([9, 0]);
    const bad = await cli(["add", "demain", "--db", ws.db, "--target", "t", "--locale", "xx"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --locale: expected a language tag duetime reads/);
  });

  it('takes "in 10 minutes"', async () => {
    const before = Date.now();
    const { code, body } = await add("in 10 minutes");
    const after = Date.now();
    expect(code).toBe(0);
    expect(Date.parse(body.job.dueAt)).toBeGreaterThanOrEqual(before + 600_000);
    expect(Date.parse(body.job.dueAt)).toBeLessThanOrEqual(after + 600_000);
  });

  it('reads "tomorrow 9am" in the --tz time zone', async () => {
    const before = Date.now();
    const { code, body } = await add("tomorrow 9am", "--tz", "Europe/Paris");
    const after = Date.now();
    expect(code).toBe(0);
    // Independently: the instant at which Paris clocks show 09:00 on the day after today
    // (today as read in Paris when the command ran).
    const expected = [before, after].map((now) => parisNineAmTomorrow(now));
    expect(expected).toContain(Date.parse(body.job.dueAt));
    expect(wallParts(Date.parse(body.job.dueAt), "Europe/Paris")).toMatchObject({
      hour: 9,
      minute: 0,
    });
    expect(body.timeZone).toBe("Europe/Paris");
    expect(body.dueAtLocal).toMatch(/ 09:00:00\.000 GMT\+[12]$/);
  });

  it("stores payload, key, tenant, max attempts and expiry", async () => {
    const { body } = await add(
      "in 1 hour",
      "--payload",
      '{"user":42,"tags":["a"]}',
      "--key",
      "k-1",
      "--tenant",
      "acme",
      "--max-attempts",
      "5",
      "--expire-after",
      "60000",
    );
    expect(body.job).toMatchObject({
      payload: { user: 42, tags: ["a"] },
      key: "k-1",
      tenant: "acme",
      maxAttempts: 5,
      expireAfterMs: 60000,
    });
  });

  it("stores --on-success, --on-failure and --on-dead as the job's callbacks; a bad URL stores nothing", async () => {
    const { body } = await add(
      "in 1 hour",
      "--on-success",
      "https://example.com/ok",
      "--on-failure",
      "https://example.com/retrying",
      "--on-dead",
      "https://example.com/dead",
    );
    expect(body.job).toMatchObject({
      callbacks: {
        onSuccess: "https://example.com/ok",
        onFailure: "https://example.com/retrying",
        onDead: "https://example.com/dead",
      },
    });
    const bad = await cli([
      "add",
      "in 1 hour",
      "--db",
      ws.db,
      "--target",
      "remind",
      "--on-dead",
      "ftp://x.example/",
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /^error: --on-dead: expected an http\(s\) URL .*received "ftp:\/\/x\.example\/"/,
    );
    const list = await cliJson<{ jobs: unknown[] }>(["list", "--db", ws.db]);
    expect(list.body.jobs).toHaveLength(1);
  });

  it("returns the existing job when the idempotency key is live", async () => {
    const first = await add("in 1 hour", "--key", "same");
    const second = await add("in 3 hours", "--key", "same");
    expect(first.body.created).toBe(true);
    expect(second.code).toBe(0);
    expect(second.body.created).toBe(false);
    expect(second.body.job.id).toBe(first.body.job.id);
    expect(second.body.job.dueAt).toBe(first.body.job.dueAt);
    const text = await cli([
      "add",
      "in 3 hours",
      "--db",
      ws.db,
      "--target",
      "remind",
      "--key",
      "same",
    ]);
    expect(text.stdout).toContain(`matched existing job ${first.body.job.id}`);
    const list = await cliJson<{ jobs: JobJson[] }>(["list", "--db", ws.db]);
    expect(list.body.jobs).toHaveLength(1);
  });

  it("prints the job in text with its due time in the zone and its bucket", async () => {
    const r = await cli([
      "add",
      "2030-06-01T07:00:00Z",
      "--target",
      "remind",
      "--tz",
      "Europe/Paris",
      "--db",
      ws.db,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^created job [0-9A-Z]{26}$/m);
    expect(r.stdout).toContain("2030-06-01T07:00:00.000Z");
    expect(r.stdout).toContain("2030-06-01 09:00:00.000 GMT+2");
    expect(r.stdout).toMatch(/bucket\s+2030-06-01T07:00:00\.000Z/);
  });
});

describe("bad input", () => {
  const cases: [string, string[], RegExp][] = [
    [
      "an unparsable time",
      ["add", "in 2 bananas", "--target", "t"],
      /^error: when: expected .*received "in 2 bananas"/,
    ],
    [
      "an unknown --key-mode, named as the flag",
      ["add", "in 1 hour", "--target", "t", "--key", "k", "--key-mode", "bogus"],
      /^error: --key-mode: expected one of keep, replace, debounce, received "bogus"/,
    ],
    [
      "--max-wait without --key-mode debounce, named as the flags",
      ["add", "in 1 hour", "--target", "t", "--key", "k", "--max-wait", "1000"],
      /^error: --key-mode: expected debounce \(maxWaitMs bounds a debounce\)/,
    ],
    [
      "a recurring phrase (a series, not one job)",
      ["add", "every monday at 9am", "--target", "t"],
      /^error: when: expected one time, not a recurring rule \(a series: .*duetime schedule add\), received "every monday at 9am"/,
    ],
    [
      "an ISO date that does not exist",
      ["add", "2030-02-30T09:00", "--target", "t"],
      /^error: when: expected an ISO 8601 date and time .*received "2030-02-30T09:00"/,
    ],
    [
      "a bad zone",
      ["add", "tomorrow 9am", "--target", "t", "--tz", "Mars/Base"],
      /^error: --tz: expected an IANA time zone/,
    ],
    [
      "a payload that is not JSON",
      ["add", "in 1 hour", "--target", "t", "--payload", "{x"],
      /^error: --payload: expected JSON/,
    ],
    [
      "max attempts out of range",
      ["add", "in 1 hour", "--target", "t", "--max-attempts", "0"],
      /^error: --max-attempts: expected an integer from 1 to 1000, received "0"/,
    ],
    [
      "a bad tenant",
      ["add", "in 1 hour", "--target", "t", "--tenant", "a b"],
      /^error: --tenant: expected letters, digits/,
    ],
    [
      "epoch seconds for epoch ms",
      ["add", "1796102111", "--target", "t"],
      /^error: when: expected epoch milliseconds from 1973 on \(1796102111 is 1970-01-21T18:55:02\.111Z; epoch seconds\? then 1796102111000\), received "1796102111"$/m,
    ],
    [
      "epoch seconds in a list range",
      ["list", "--from", "1796102111"],
      /^error: --from: expected epoch milliseconds from 1973 on \(1796102111 is 1970/,
    ],
    ["a bad status", ["list", "--status", "sleeping"], /^error: --status: expected one of pending/],
    [
      "a bad limit",
      ["list", "--limit", "5000"],
      /^error: --limit: expected an integer from 1 to 1000/,
    ],
    ["a bad cursor", ["list", "--cursor", "zzz"], /^error: --cursor: expected a cursor/],
    ["a missing target", ["add", "in 1 hour"], /^error: required option '--target <handler>'/],
    ["an unknown option", ["list", "--frobnicate"], /^error: unknown option '--frobnicate'/],
    ["an unknown command", ["frobnicate"], /^error: unknown command 'frobnicate'/],
  ];
  it.each(cases)("%s exits 2 naming the field, without a stack trace", async (_, args, re) => {
    await cli(["migrate", "--db", ws.db]); // list and the like refuse a file that does not exist
    const r = await cli([...args, "--db", ws.db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(re);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe("");
  });
});

describe("the one JSON view of a job", () => {
  it("add, show, list, cancel --json print the HTTP API's Job: its fields, ISO times", async () => {
    const { body } = await add("2030-06-01T09:00:00+02:00", "--key", "k-1");
    const schema = SCHEMAS.Job as { properties: Record<string, unknown> };
    const fields = Object.keys(schema.properties).sort();
    expect(Object.keys(body.job).sort()).toEqual(fields);
    const shown = await cliJson<JobJson>(["show", body.job.id, "--db", ws.db]);
    expect(shown.body).toEqual(body.job);
    const listed = await cliJson<{ jobs: JobJson[] }>(["list", "--db", ws.db]);
    expect(listed.body.jobs).toEqual([body.job]);
    const cancelled = await cliJson<{ outcome: string; job: JobJson }>([
      "cancel",
      body.job.id,
      "--db",
      ws.db,
    ]);
    expect(cancelled.body.outcome).toBe("cancelled");
    expect(Object.keys(cancelled.body.job).sort()).toEqual(fields);
    expect(cancelled.body.job.dueAt).toBe("2030-06-01T07:00:00.000Z");
  });
});

describe("times as digits", () => {
  it("reads 13 digits as epoch ms and 0 as the epoch in a range, and refuses earlier digits", async () => {
    const early = await cliJson<{ job: { dueAt: string } }>([
      "add",
      "1796102111000",
      "--target",
      "t",
      "--db",
      ws.db,
    ]);
    expect(early.code).toBe(0);
    expect(Date.parse(early.body.job.dueAt)).toBe(1796102111000);
    await cli(["add", "1896102111000", "--target", "t", "--db", ws.db]);
    // --from 0 is the epoch: both; a bound between them: the later one only
    const all = await cliJson<{ jobs: unknown[] }>(["list", "--from", "0", "--db", ws.db]);
    expect(all.body.jobs).toHaveLength(2);
    const later = await cliJson<{ jobs: unknown[] }>([
      "list",
      "--from",
      "1800000000000",
      "--db",
      ws.db,
    ]);
    expect(later.body.jobs).toHaveLength(1);
    // the boundary: 1973-03-03T09:46:40Z is the first accepted millisecond
    expect((await cli(["add", "100000000000", "--target", "t", "--db", ws.db])).code).toBe(0);
    const before = await cli(["add", "99999999999", "--target", "t", "--db", ws.db]);
    expect(before.code).toBe(2);
    expect(before.stderr).toMatch(
      /^error: when: expected epoch milliseconds from 1973 on \(99999999999 is 1973-03-03T09:46:39\.999Z; epoch seconds\? then 99999999999000\)/,
    );
    // too small to be seconds of a later date: no seconds hint; 0 is no due time
    const refusals = [
      [["add", "900", "--target", "t"], "when"],
      [["add", "0", "--target", "t"], "when"],
      [["retry", "01J0000000000000000000000", "--at", "1796102111"], "--at"],
      [["reschedule", "01J0000000000000000000000", "1796102111"], "when"],
    ] as const;
    const runs = await cliAll(refusals.map(([args]) => [...args, "--db", ws.db]));
    refusals.forEach(([, field], i) => {
      expect(runs[i]!.code).toBe(2);
      expect(runs[i]!.stderr).toMatch(
        new RegExp(`^error: ${field}: expected epoch milliseconds from 1973 on`),
      );
    });
    expect(runs[0]!.stderr).not.toMatch(/epoch seconds/); // add 900
  });
});

describe("a mistyped --db", () => {
  it("is refused by every command that reads jobs, and no file is made", async () => {
    const typo = join(ws.dir, "typo.db");
    const commands = [
      ["list"],
      ["show", "01J0000000000000000000000"],
      ["stats"],
      ["cancel", "01J0000000000000000000000"],
      ["reschedule", "01J0000000000000000000000", "in 1 hour"],
      ["retry", "01J0000000000000000000000"],
    ];
    const [fromEnv, prefixed, ...runs] = await Promise.all([
      // the same path from DUETIME_DB, or a sqlite: prefix, is refused naming its source
      cli(["list"], { env: { DUETIME_DB: typo } }),
      cli(["stats", "--db", `sqlite:${typo}`]),
      ...commands.map((args) => cli([...args, "--db", typo])),
    ]);
    commands.forEach((args, i) => {
      expect(runs[i]!.code).toBe(2);
      expect(runs[i]!.stderr).toBe(
        `error: --db: expected an existing database file (${args[0]} does not create one; add does), received ${JSON.stringify(typo)}\n`,
      );
    });
    expect(fromEnv!.code).toBe(2);
    expect(fromEnv!.stderr).toMatch(/^error: DUETIME_DB: expected an existing database file/);
    expect(prefixed!.code).toBe(2);
    expect(prefixed!.stderr).toMatch(/^error: --db: expected an existing database file/);
    expect(existsSync(typo)).toBe(false);
    // add creates it; then list reads it
    expect((await cli(["add", "in 1 hour", "--target", "t", "--db", typo])).code).toBe(0);
    expect((await cli(["list", "--db", typo])).code).toBe(0);
  });
});

describe("list, show, cancel, reschedule", () => {
  it("lists in due order with a cursor over pages, filtered by status and range", async () => {
    const ids: string[] = [];
    for (const h of [5, 1, 3, 2, 4]) {
      const { body } = await add(`2030-01-01T0${h}:00:00Z`, "--payload", String(h));
      ids[h] = body.job.id;
    }
    const p1 = await cliJson<{ jobs: JobJson[]; nextCursor: string | null }>([
      "list",
      "--db",
      ws.db,
      "--limit",
      "2",
    ]);
    expect(p1.body.jobs.map((j) => j.payload)).toEqual([1, 2]);
    expect(p1.body.nextCursor).toEqual(expect.any(String));
    const p2 = await cliJson<{ jobs: JobJson[]; nextCursor: string | null }>([
      "list",
      "--db",
      ws.db,
      "--limit",
      "2",
      "--cursor",
      p1.body.nextCursor!,
    ]);
    expect(p2.body.jobs.map((j) => j.payload)).toEqual([3, 4]);

    const range = await cliJson<{ jobs: JobJson[] }>([
      "list",
      "--db",
      ws.db,
      "--from",
      "2030-01-01T02:00:00Z",
      "--to",
      "2030-01-01T04:00:00Z",
    ]);
    expect(range.body.jobs.map((j) => j.payload)).toEqual([2, 3]);

    await cli(["cancel", ids[3]!, "--db", ws.db]);
    const cancelled = await cliJson<{ jobs: JobJson[] }>([
      "list",
      "--db",
      ws.db,
      "--status",
      "cancelled",
    ]);
    expect(cancelled.body.jobs.map((j) => j.id)).toEqual([ids[3]]);

    const text = await cli(["list", "--db", ws.db, "--limit", "2", "--tz", "UTC"]);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+DUE \(UTC\)\s+TARGET\s+ATTEMPTS\s+TAGS$/);
    expect(lines[1]).toMatch(
      new RegExp(`^${ids[1]}\\s+pending\\s+2030-01-01 01:00:00\\.000 UTC\\s+remind\\s+0/3\\s+-$`),
    );
    expect(lines[3]).toMatch(/^\(2 jobs\) next page: --cursor \S+$/);
  });

  it("shows a job, and exits 3 when there is none", async () => {
    const { body } = await add("2030-01-01T00:00:00Z", "--key", "show-me");
    const shown = await cliJson<JobJson>(["show", body.job.id, "--db", ws.db]);
    expect(shown.code).toBe(0);
    expect(shown.body).toMatchObject({ id: body.job.id, key: "show-me", status: "pending" });
    const text = await cli(["show", body.job.id, "--db", ws.db]);
    expect(text.stdout).toMatch(/status\s+pending/);
    const missing = await cliJson(["show", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--db", ws.db]);
    expect(missing.code).toBe(3);
    expect(missing.body).toEqual({ outcome: "not-found", id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" });
  });

  it("cancel answers cancelled (0), then too-late (4); an unknown id is not-found (3)", async () => {
    const { body } = await add("in 1 hour");
    const first = await cliJson<{ outcome: string; job: JobJson }>([
      "cancel",
      body.job.id,
      "--db",
      ws.db,
    ]);
    expect(first.code).toBe(0);
    expect(first.body.outcome).toBe("cancelled");
    expect(first.body.job.status).toBe("cancelled");
    const again = await cli(["cancel", body.job.id, "--db", ws.db]);
    expect(again.code).toBe(4);
    expect(again.stdout).toMatch(/^too-late: job \S+ is already cancelled/);
    const missing = await cliJson(["cancel", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--db", ws.db]);
    expect(missing.code).toBe(3);
    expect(missing.body).toMatchObject({ outcome: "not-found" });
    const shown = await cliJson<JobJson>(["show", body.job.id, "--db", ws.db]);
    expect(shown.body.status).toBe("cancelled");
  });

  it("reschedules a pending job (with an expected version) and refuses a stale one", async () => {
    const { body } = await add("in 1 hour");
    const moved = await cliJson<{ outcome: string; job: JobJson }>([
      "reschedule",
      body.job.id,
      "2031-05-05T10:00:00+02:00",
      "--expected-version",
      String(body.job.version),
      "--db",
      ws.db,
    ]);
    expect(moved.code).toBe(0);
    expect(moved.body.outcome).toBe("rescheduled");
    expect(moved.body.job.dueAt).toBe("2031-05-05T08:00:00.000Z");
    const stale = await cli([
      "reschedule",
      body.job.id,
      "in 2 hours",
      "--expected-version",
      String(body.job.version),
      "--db",
      ws.db,
    ]);
    expect(stale.code).toBe(5);
    expect(stale.stdout).toMatch(/^version-conflict/);
    await cli(["cancel", body.job.id, "--db", ws.db]);
    const late = await cli(["reschedule", body.job.id, "in 2 hours", "--db", ws.db]);
    expect(late.code).toBe(4);
    const retryPending = await cli(["retry", body.job.id, "--db", ws.db]);
    expect(retryPending.code).toBe(4);
    expect(retryPending.stdout).toMatch(/only dead jobs can be retried/);
  });

  it("takes the database from DUETIME_DB and from --db before the command", async () => {
    const viaEnv = await cliJson<AddJson>(["add", "in 1 hour", "--target", "t"], {
      env: { DUETIME_DB: ws.db },
    });
    expect(viaEnv.code).toBe(0);
    const viaGlobal = await cliJson<JobJson>(["--db", ws.db, "show", viaEnv.body.job.id]);
    expect(viaGlobal.body.id).toBe(viaEnv.body.job.id);
  });
});

/** The instant Paris clocks read 09:00 on the day after `now`'s Paris date, found with Intl. */
function parisNineAmTomorrow(now: number): number {
  const today = wallParts(now, "Europe/Paris");
  const d = new Date(Date.UTC(today.year, today.month - 1, today.day + 1));
  const target = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
  for (const offsetHours of [1, 2, 0, 3]) {
    const t = Date.UTC(target.year, target.month - 1, target.day, 9) - offsetHours * HOUR;
    const w = wallParts(t, "Europe/Paris");
    if (
      w.year === target.year &&
      w.month === target.month &&
      w.day === target.day &&
      w.hour === 9 &&
      w.minute === 0
    ) {
      return t;
    }
  }
  throw new Error("no 09:00 found");
}
