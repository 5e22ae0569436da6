import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createScheduler } from "../../src/create-scheduler.js";
import { startTestService, type TestService } from "../service/helpers.js";
import { cli, cliAll, cliJson, ensureBuilt, tempWorkspace } from "./helpers.js";

/**
 * Tags and bulk operations on the CLI (issue 13 §2-§3): `add --tag`, `list --tag`, and
 * `cancel|reschedule|retry|erase` by filter, each creating one operation and following it to
 * its end, on a local SQLite file and against a real service (--url). Output is a pipe here,
 * so the progress comes as plain lines.
 */

interface OperationView {
  id: string;
  key: string | null;
  kind: string;
  state: string;
  scanned: number;
  changed: number;
  skipped: number;
  filter: Record<string, unknown>;
}

const HOUR = 3_600_000;

beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

/** Jobs written by the library on the file: 5 tagged user:42, 2 user:7, 3 untagged, 1 of globex. */
async function seed(db: string): Promise<{ user42: string[]; user7: string[]; dueAt: number }> {
  const s = await createScheduler({ db });
  const dueAt = Date.now() + 10 * HOUR;
  const job = (tags?: string[], tenant?: string) => ({
    dueAt,
    target: "remind",
    ...(tags === undefined ? {} : { tags }),
    ...(tenant === undefined ? {} : { tenant }),
  });
  const user42 = [];
  for (let i = 0; i < 5; i++) user42.push((await s.schedule(job(["user:42", `n:${i}`]))).job.id);
  const user7 = [];
  for (let i = 0; i < 2; i++) user7.push((await s.schedule(job(["user:7"]))).job.id);
  for (let i = 0; i < 3; i++) await s.schedule(job());
  await s.schedule(job(["user:42"], "globex"));
  await s.close();
  return { user42, user7, dueAt };
}

async function jobsOf(db: string, ids: readonly string[]) {
  const s = await createScheduler({ db });
  try {
    return await Promise.all(ids.map((id) => s.get(id)));
  } finally {
    await s.close();
  }
}

describe("bulk operations on a local database", () => {
  it("counts, cancels, reschedules and erases by tag, with progress lines and a final record", async () => {
    const { user42, user7, dueAt } = await seed(ws.db);
    const db = ["--db", ws.db];

    const dry = await cliJson<{ operation: OperationView }>([
      "cancel",
      "--tag",
      "user:42",
      "--count",
      ...db,
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.body.operation).toMatchObject({ kind: "count", state: "done", changed: 5 });
    expect((await jobsOf(ws.db, user42)).map((j) => j!.status)).toEqual(Array(5).fill("pending"));

    const cancel = await cli(["cancel", "--tag", "user:42", ...db]);
    expect(cancel.code, cancel.stderr).toBe(0);
    const lines = cancel.stdout.trim().split("\n");
    // not a TTY: a plain progress line (5 of the tag's 5 entries read), then the summary
    expect(lines[0]).toMatch(/^\[█+\] 100% {2}5 of 5 read, 5 cancelled, 0 skipped, /);
    expect(lines.at(-1)).toMatch(
      /^cancel done: 5 jobs cancelled, 0 matching left as they are \(5 read, operation \w{26}\)$/,
    );
    expect((await jobsOf(ws.db, user42)).map((j) => j!.status)).toEqual(Array(5).fill("cancelled"));
    // another tenant's job with the tag, and the untagged ones, are left
    const pendingLeft = await cliJson<{ jobs: { tags: string[] }[] }>([
      "list",
      "--status",
      "pending",
      ...db,
    ]);
    // user:7's 2, the 3 untagged and globex's (list without --tenant shows every tenant)
    expect(pendingLeft.body.jobs).toHaveLength(6);

    const moved = await cliJson<{ operation: OperationView }>([
      "reschedule",
      "--tag",
      "user:7",
      "--shift",
      "1h 30m",
      ...db,
    ]);
    expect(moved.body.operation).toMatchObject({ kind: "reschedule", state: "done", changed: 2 });
    for (const j of await jobsOf(ws.db, user7)) expect(j!.dueAt).toBe(dueAt + 1.5 * HOUR);
    const back = await cli(["reschedule", "--tag", "user:7", "--shift", "-90m", ...db]);
    expect(back.stdout).toContain("reschedule done: 2 jobs rescheduled");
    for (const j of await jobsOf(ws.db, user7)) expect(j!.dueAt).toBe(dueAt);

    const retry = await cliJson<{ operation: OperationView }>(["retry", "--tag", "user:42", ...db]);
    // cancelled jobs are not dead: matched, left as they are
    expect(retry.body.operation).toMatchObject({ state: "done", changed: 0, skipped: 5 });

    const erase = await cliJson<{ operation: OperationView }>(["erase", "--tag", "user:42", ...db]);
    expect(erase.body.operation).toMatchObject({ kind: "erase", state: "done", changed: 5 });
    expect(await jobsOf(ws.db, user42)).toEqual(Array(5).fill(null));
    const globex = await cliJson<{ jobs: unknown[] }>([
      "list",
      "--tag",
      "user:42",
      "--tenant",
      "globex",
      ...db,
    ]);
    expect(globex.body.jobs).toHaveLength(1);
  });

  it("keeps cancel <id>, and refuses both or neither of a job and a filter, naming the flag", async () => {
    const { user7 } = await seed(ws.db);
    const db = ["--db", ws.db];
    const one = await cli(["cancel", user7[0]!, ...db]);
    expect([one.code, one.stdout]).toEqual([0, expect.stringMatching(/^cancelled: job /)]);
    const refusals: [string[], RegExp][] = [
      [["cancel"], /^error: id: expected a job id or --key, or a filter \(--tag, /],
      [["cancel", user7[1]!, "--tag", "user:7"], /^error: --tag: expected either a job id/],
      [["cancel", "--tag", "user 7"], /^error: --tag: expected printable characters without/],
      [["cancel", "--count"], /^error: id: expected /],
      [["reschedule", "--tag", "user:7"], /^error: --shift: expected either --shift or --at/],
      [
        ["reschedule", user7[1]!, "in 1 hour", "--shift", "1h"],
        /^error: --shift: expected a filter/,
      ],
      [["erase"], /^error: --tag: expected a filter/],
      [["cancel", user7[1]!, "--operation-key", "k"], /^error: --operation-key: expected a filter/],
      [
        ["cancel", "--tag", "user:7", "--operation-key", "k".repeat(257)],
        /^error: --operation-key: expected a string of 1 to 256 characters, received 257/,
      ],
    ];
    const runs = await cliAll(refusals.map(([args]) => [...args, ...db]));
    refusals.forEach(([args, message], i) => {
      expect(runs[i]!.code, args.join(" ")).toBe(2);
      expect(runs[i]!.stderr, args.join(" ")).toMatch(message);
    });
    // nothing was changed by any refusal: the other user:7 job is pending, no operation made
    expect((await jobsOf(ws.db, [user7[1]!]))[0]!.status).toBe("pending");
    const s = await createScheduler({ db: ws.db });
    expect((await s.listOperations()).operations).toEqual([]);
    await s.close();
  });

  it("--operation-key: run again, the command follows the first operation; another filter under it exits 5", async () => {
    const { user7 } = await seed(ws.db);
    const db = ["--db", ws.db];
    const args = ["cancel", "--tag", "user:42", "--operation-key", "erase-42", ...db];
    const first = await cliJson<{ operation: OperationView }>(args);
    expect(first.code, first.stderr).toBe(0);
    expect(first.body.operation).toMatchObject({ key: "erase-42", state: "done", changed: 5 });
    const [again, other] = await cliAll([
      [...args, "--json"],
      ["cancel", "--tag", "user:7", "--operation-key", "erase-42", ...db],
    ]);
    expect(again!.code, again!.stderr).toBe(0);
    expect(JSON.parse(again!.stdout)).toEqual(first.body);
    expect([other!.code, other!.stdout]).toEqual([
      5,
      `key-conflict: --operation-key started operation ${first.body.operation.id} with another filter or kind\n`,
    ]);
    expect((await jobsOf(ws.db, user7)).map((j) => j!.status)).toEqual(["pending", "pending"]);
    const s = await createScheduler({ db: ws.db });
    expect((await s.listOperations()).operations.map((o) => o.id)).toEqual([
      first.body.operation.id,
    ]);
    await s.close();
  });

  it("add --tag stores tags; list --tag and show print them", async () => {
    const db = ["--db", ws.db];
    const add = await cliJson<{ job: { id: string; tags: string[] } }>([
      "add",
      "in 1 hour",
      "--target",
      "remind",
      "--tag",
      "user:42",
      "--tag",
      "campaign:spring",
      ...db,
    ]);
    expect(add.body.job.tags).toEqual(["user:42", "campaign:spring"]);
    await cli(["add", "in 2 hours", "--target", "remind", ...db]);
    const text = await cli(["list", "--tag", "campaign:spring", ...db]);
    expect(text.stdout).toMatch(/TAGS\n.*user:42, campaign:spring\n\(1 job, last page\)/);
    const show = await cli(["show", add.body.job.id, ...db]);
    expect(show.stdout).toMatch(/tags\s+user:42, campaign:spring/);
    const bad = await cli(["add", "in 1 hour", "--target", "r", "--tag", "a", "--tag", "a", ...db]);
    expect(bad.stderr).toMatch(/^error: --tag: expected a tag not given before in the list/);
  });
});

describe("bulk operations against a service (--url)", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t.close();
  });

  it("starts the operation on the server and follows it to its end, in the key's tenant", async () => {
    const job = (tags: string[]) => ({ delayMs: 10 * HOUR, target: "https://h.example/x", tags });
    await t.api("POST", "/v1/jobs/batch", {
      body: { jobs: [job(["user:42"]), job(["user:42", "x"]), job(["user:7"])] },
    });
    await t.api("POST", "/v1/jobs", { key: t.umbrella.key, body: job(["user:42"]) });
    const remote = ["--url", t.svc.url, "--api-key", t.acme.key];
    const dry = await cliJson<{ operation: OperationView }>([
      "cancel",
      "--tag",
      "user:42",
      "--count",
      ...remote,
    ]);
    expect(dry.body.operation).toMatchObject({ kind: "count", state: "done", changed: 2 });
    const r = await cli(["cancel", "--tag", "user:42", ...remote]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").at(-1)).toMatch(/^cancel done: 2 jobs cancelled, /);
    const counted = await t.api("GET", "/v1/jobs/count?tag=user:42&status=cancelled");
    expect(counted.body.count).toBe(2);
    const theirs = await t.api("GET", "/v1/jobs/count?tag=user:42&status=pending", {
      key: t.umbrella.key,
    });
    expect(theirs.body.count).toBe(1);
    const id = r.stdout.match(/operation (\w{26})\)/)![1]!;
    const op = await t.api("GET", `/v1/operations/${id}`);
    expect(op.body.operation).toMatchObject({
      state: "done",
      changed: 2,
      filter: { tags: ["user:42"] },
    });
    // a retried command with its operation key follows the first operation on the server
    const keyed = ["cancel", "--tag", "user:7", "--operation-key", "k7", ...remote];
    const k1 = await cliJson<{ operation: OperationView }>(keyed);
    const [k2, k3] = await cliAll([
      [...keyed, "--json"],
      ["cancel", "--tag", "x", "--operation-key", "k7", ...remote],
    ]);
    expect(k1.body.operation).toMatchObject({ key: "k7", state: "done", changed: 1 });
    expect(JSON.parse(k2!.stdout)).toEqual(k1.body);
    expect([k3!.code, k3!.stdout]).toEqual([
      5,
      `key-conflict: --operation-key started operation ${k1.body.operation.id} with another filter or kind\n`,
    ]);
    const bad = await cli(["cancel", "--tag", "user:42", "--tenant", "x", ...remote]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/^error: --tenant: /)]);
  });
});
