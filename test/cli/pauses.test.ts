import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createScheduler } from "../../src/create-scheduler.js";
import type { Scheduler } from "../../src/api/scheduler.js";
import { startTestService, type TestService } from "../service/helpers.js";
import { cli, cliJson, ensureBuilt, tempWorkspace } from "./helpers.js";

/**
 * Issue 13 §4 on the CLI: `duetime pause`, `resume` and `pauses`, one process per command, on
 * a real SQLite file and against a real service on 127.0.0.1 (--url), --json printing the one
 * pause view the HTTP API answers with.
 */

interface View {
  id: string;
  tenant: string;
  scope: Record<string, unknown>;
  onResume: string;
  state: string;
  heldJobs: number;
  holdComplete: boolean;
}

const HOUR = 3_600_000;

beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

/** Opens the test's database in this process (seeding, and checking what the CLI left). */
async function withFile(fn: (s: Scheduler) => Promise<void>): Promise<void> {
  const s = await createScheduler({ db: ws.db });
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

describe("duetime pause on a local database", () => {
  it("holds a target's pending jobs, lists and shows the pause, and resumes it", async () => {
    const db = ["--db", ws.db];
    await withFile(async (s) => {
      for (const target of ["mail", "mail", "sms"]) await s.schedule({ target, delayMs: HOUR });
    });
    const made = await cliJson<{ pause: View }>(["pause", ...db, "--target", "mail"]);
    expect(made.code, made.stderr).toBe(0);
    // the command did the holding before it exited: both jobs pending before it are held
    expect(made.body.pause).toMatchObject({
      tenant: "default",
      scope: { target: "mail" },
      onResume: "fire",
      state: "active",
      heldJobs: 2,
      holdComplete: true,
    });
    const id = made.body.pause.id;
    const listed = await cliJson<{ pauses: View[] }>(["pauses", ...db]);
    expect(listed.body.pauses.map((p) => [p.id, p.heldJobs])).toEqual([[id, 2]]);
    const shown = await cli(["pauses", id, ...db]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/scope\s+target mail/);
    expect(shown.stdout).toMatch(/held jobs\s+2\n/);
    const resumed = await cli(["resume", id, ...db]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe(
      `resumed pause ${id} (target mail): 2 held jobs given back (fire)\n`,
    );
    const after = await cliJson<{ pauses: View[] }>(["pauses", ...db, "--state", "resumed"]);
    expect(after.body.pauses).toMatchObject([{ id, state: "resumed", heldJobs: 0 }]);
    await withFile(async (s) => {
      expect((await s.list({ status: ["pending"] })).jobs.every((j) => j.pausedBy === null)).toBe(
        true,
      );
    });
  });

  it("refuses a missing scope, a bad policy and a bad state naming the flag (exit 2), storing nothing", async () => {
    const db = ["--db", ws.db];
    const none = await cli(["pause", ...db]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /^error: --target: expected exactly one of --target, --tag or --tenant/,
    );
    const policy = await cli(["pause", ...db, "--tenant", "--on-resume", "later"]);
    expect(policy.code).toBe(2);
    expect(policy.stderr).toMatch(/^error: --on-resume: expected one of fire, expire, shift/);
    const state = await cli(["pauses", ...db, "--state", "paused"]);
    expect(state.code).toBe(2);
    expect(state.stderr).toMatch(/^error: --state: /);
    await withFile(async (s) => {
      expect(await s.listPauses({ states: ["active", "resuming", "resumed"] })).toEqual([]);
    });
  });

  it("lists a page at a time: --limit, --cursor and the next cursor, --json and text", async () => {
    await pagesOfThree(["--db", ws.db]);
    await pagingRefusals(["--db", ws.db]);
  });
});

/**
 * `duetime pauses --limit N [--cursor C]` page by page on `args` (a database or a server):
 * three tag pauses make pages of 2 and 1, in creation order, each naming the next cursor
 * (--json and text alike).
 */
async function pagesOfThree(args: string[]): Promise<void> {
  const ids: string[] = [];
  for (const tag of ["a", "b", "c"]) {
    const made = await cliJson<{ pause: View }>([...args, "pause", "--tag", tag]);
    expect(made.code, made.stderr).toBe(0);
    ids.push(made.body.pause.id);
  }
  type Page = { pauses: View[]; nextCursor: string | null };
  const first = await cliJson<Page>([...args, "pauses", "--limit", "2"]);
  expect(first.code, first.stderr).toBe(0);
  expect(first.body.pauses.map((p) => p.id)).toEqual(ids.slice(0, 2));
  expect(first.body.nextCursor).toBe(ids[1]);
  const second = await cliJson<Page>([...args, "pauses", "--limit", "2", "--cursor", ids[1]!]);
  expect(second.body).toMatchObject({ pauses: [{ id: ids[2] }], nextCursor: null });
  const text = await cli([...args, "pauses", "--limit", "2"]);
  expect(text.stdout).toMatch(new RegExp(`\\(2 pauses\\) next page: --cursor ${ids[1]}\n$`));
  const last = await cli([...args, "pauses", "--cursor", ids[1]!]);
  expect(last.stdout).toMatch(
    new RegExp(`${ids[2]}\\s+tag c\\s+active[^\\n]*\n\\(1 pause, last page\\)\n$`),
  );
  // the default page (100) holds all three
  const all = await cliJson<Page>([...args, "pauses"]);
  expect(all.body).toMatchObject({ nextCursor: null });
  expect(all.body.pauses.map((p) => p.id)).toEqual(ids);
}

/** Bad paging flags on `args` exit 2 naming the flag: their stderr, to compare surfaces. */
async function pagingRefusals(args: string[]): Promise<string[]> {
  const refusals: string[] = [];
  for (const [flags, re] of [
    [["--limit", "0"], /^error: --limit: expected an integer from 1 to 1000, received "0"/],
    [["--limit", "1001"], /^error: --limit: expected an integer from 1 to 1000/],
    [["--limit", "many"], /^error: --limit: expected an integer from 1 to 1000/],
    [["--cursor", "x".repeat(65)], /^error: --cursor: expected a string of 1 to 64 characters/],
    [["01JZZZZZZZZZZZZZZZZZZZZZZZ", "--limit", "2"], /^error: --limit: expected no --limit when/],
  ] as const) {
    const r = await cli([...args, "pauses", ...flags]);
    expect(r.code, r.stdout).toBe(2);
    expect(r.stderr).toMatch(re);
    refusals.push(r.stderr);
  }
  return refusals;
}

describe("duetime pause --url", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ clock: new ManualClock(Date.UTC(2026, 2, 1, 10, 0, 0)) });
  });
  afterAll(async () => {
    await t.close();
  });

  it("pauses, lists and resumes through the server; another tenant's key gets not-found", async () => {
    const remote = ["--url", t.svc.url, "--api-key", t.acme.key];
    await t.api("POST", "/v1/jobs", {
      body: { dueAt: "in 1 hour", target: "https://hooks.example.com/a", tags: ["user:42"] },
    });
    const made = await cliJson<{ pause: View }>([
      ...remote,
      "pause",
      "--tag",
      "user:42",
      "--on-resume",
      "shift",
    ]);
    expect(made.code, made.stderr).toBe(0);
    const id = made.body.pause.id;
    const api = (await t.api("GET", `/v1/pauses/${id}`)).body.pause;
    // the API's view (its held count may have moved on since: the server holds in the background)
    expect(Object.keys(made.body.pause).sort()).toEqual(Object.keys(api).sort());
    expect(made.body.pause).toMatchObject({
      tenant: "acme",
      scope: { tag: "user:42" },
      onResume: "shift",
      pausedAt: api.pausedAt,
    });
    const listed = await cli([...remote, "pauses"]);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+tag user:42\\s+active`));

    const theirs = await cli(["--url", t.svc.url, "--api-key", t.umbrella.key, "resume", id]);
    expect(theirs.code).toBe(3);
    expect(theirs.stdout).toBe(`not-found: no pause ${id}\n`);
    const named = await cli([...remote, "pause", "--tenant", "acme"]);
    expect(named.code).toBe(2);
    expect(named.stderr).toMatch(/^error: --tenant: expected no --tenant with --url/);

    const resumed = await cliJson<{ pause: View; releasing: unknown }>([...remote, "resume", id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.body.pause).toMatchObject({ id, state: "resuming" });
    expect(resumed.body.releasing).toEqual({ jobs: 1, onResume: "shift" });
  });

  it("lists a page at a time through the server, refusing bad flags as the local database does", async () => {
    // another tenant's key than the test before: its pauses are its own
    const remote = ["--url", t.svc.url, "--api-key", t.umbrella.key];
    await pagesOfThree(remote);
    await cli(["migrate", "--db", ws.db]); // the local refusals read an existing file
    expect(await pagingRefusals(remote)).toEqual(await pagingRefusals(["--db", ws.db]));
  });
});
