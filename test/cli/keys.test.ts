import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cli, cliJson, ensureBuilt, tempWorkspace } from "./helpers.js";

/** Issue 13 §1 on the CLI: add --key-mode, and show/cancel/reschedule --key. */

interface AddJson {
  created: boolean;
  outcome: string;
  job: { id: string; dueAt: string; payload: unknown; version: number };
}

beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

const add = (when: string, ...flags: string[]) =>
  cliJson<AddJson>(["add", when, "--db", ws.db, "--target", "remind", ...flags]);

describe("keys on the CLI", () => {
  it("replaces with --key-mode, then shows, moves and cancels by --key", async () => {
    const first = await add("in 1 hour", "--key", "standup:42", "--payload", "1");
    expect(first.body.outcome).toBe("created");
    const replaced = await add(
      "in 2 hours",
      "--key",
      "standup:42",
      "--payload",
      "2",
      "--key-mode",
      "replace",
    );
    expect(replaced.code).toBe(0);
    expect(replaced.body).toMatchObject({
      created: false,
      outcome: "replaced",
      job: { id: first.body.job.id, payload: 2, version: 2 },
    });
    const text = await cli([
      "add",
      "in 3 hours",
      "--db",
      ws.db,
      "--target",
      "remind",
      "--key",
      "standup:42",
      "--key-mode",
      "replace",
    ]);
    expect(text.stdout.split("\n")[0]).toBe(`replaced job ${first.body.job.id} (key "standup:42")`);

    const shown = await cliJson<{ id: string; version: number }>([
      "show",
      "--key",
      "standup:42",
      "--db",
      ws.db,
    ]);
    expect(shown.body).toMatchObject({ id: first.body.job.id, version: 3 });
    const stale = await cli([
      "reschedule",
      "--key",
      "standup:42",
      "in 4 hours",
      "--expected-version",
      "1",
      "--db",
      ws.db,
    ]);
    expect(stale.code).toBe(5);
    expect(stale.stdout).toMatch(/^version-conflict: job \w+ is at version 3/);
    const moved = await cli(["reschedule", "--key", "standup:42", "in 4 hours", "--db", ws.db]);
    expect(moved.code).toBe(0);
    expect(moved.stdout).toMatch(new RegExp(`^rescheduled: job ${first.body.job.id} due `));
    const cancelled = await cli(["cancel", "--key", "standup:42", "--db", ws.db]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toMatch(new RegExp(`^cancelled: job ${first.body.job.id} `));
    const gone = await cli(["cancel", "--key", "standup:42", "--db", ws.db]);
    expect(gone.code).toBe(3);
    expect(gone.stdout.trim()).toBe('not-found: no live job with key "standup:42"');
  });

  it("refuses a bad mode, an id beside --key, and neither", async () => {
    const bad = await cli([
      "add",
      "in 1 hour",
      "--db",
      ws.db,
      "--target",
      "r",
      "--key",
      "k",
      "--key-mode",
      "merge",
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /--key-mode: expected one of keep, replace, debounce, received "merge"/,
    );
    const both = await cli(["cancel", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--key", "k", "--db", ws.db]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--key: expected either a job id or --key, not both/);
    const neither = await cli(["show", "--db", ws.db]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/id: expected a job id \(or --key <key>\)/);
  });
});
