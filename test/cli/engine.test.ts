import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cli, cliJson, ensureBuilt, startCli, tempWorkspace } from "./helpers.js";

beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

interface JobJson {
  id: string;
  status: string;
  attempts: number;
  lastResult: unknown;
  lastError: string | null;
}

describe("duetime run", () => {
  it("fires jobs already due with the module's handlers and stops cleanly on SIGTERM", async () => {
    const handlers = join(ws.dir, "handlers.mjs");
    writeFileSync(
      handlers,
      `export default {
  greet: async (job) => ({ hello: job.payload.name }),
  boom: () => { throw new Error("kaboom"); },
};
`,
    );
    const past = new Date(Date.now() - 60_000).toISOString();
    const ok = await cliJson<{ job: JobJson }>([
      "add",
      past,
      "--target",
      "greet",
      "--payload",
      '{"name":"ada"}',
      "--db",
      ws.db,
    ]);
    const bad = await cliJson<{ job: JobJson }>([
      "add",
      past,
      "--target",
      "boom",
      "--max-attempts",
      "1",
      "--db",
      ws.db,
    ]);
    const run = startCli(["run", "--handlers", handlers, "--db", ws.db]);
    try {
      await run.waitFor(
        new RegExp(`succeeded\\s+id=${ok.body.job.id} target=greet latenessMs=\\d+`),
      );
      await run.waitFor(new RegExp(`dead\\s+id=${bad.body.job.id} target=boom .*error=kaboom`));
    } finally {
      run.child.kill("SIGTERM");
    }
    const exit = await run.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(run.output()).toMatch(/stopping[\s\S]*stopped/);

    const fired = await cliJson<JobJson>(["show", ok.body.job.id, "--db", ws.db]);
    expect(fired.body).toMatchObject({
      status: "succeeded",
      attempts: 1,
      lastResult: { hello: "ada" },
    });
    const dead = await cliJson<JobJson>(["show", bad.body.job.id, "--db", ws.db]);
    expect(dead.body).toMatchObject({ status: "dead", lastError: "kaboom" });

    // retry puts the dead job back to pending with a fresh attempt budget.
    const retried = await cliJson<{ outcome: string; job: JobJson }>([
      "retry",
      bad.body.job.id,
      "--db",
      ws.db,
    ]);
    expect(retried.code).toBe(0);
    expect(retried.body).toMatchObject({
      outcome: "rescheduled",
      job: { status: "pending", attempts: 0 },
    });
    const tooLate = await cli(["cancel", ok.body.job.id, "--db", ws.db]);
    expect(tooLate.code).toBe(4);
    expect(tooLate.stdout).toMatch(/too-late: job \S+ is already succeeded/);
  });

  it("refuses a handler module that does not export handlers (exit 2)", async () => {
    const empty = join(ws.dir, "empty.mjs");
    writeFileSync(empty, "export const x = 1;\n");
    const r = await cli(["run", "--handlers", empty, "--db", ws.db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --handlers: expected a module whose default export/);
    // a module that exists but imports one that does not: that import is the error shown
    const broken = join(ws.dir, "broken.mjs");
    writeFileSync(broken, 'import "./gone.mjs";\nexport default { t: () => 1 };\n');
    const b = await cli(["run", "--handlers", broken, "--db", ws.db]);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(
      /^error: loading handlers from .*broken\.mjs: Cannot find module .*gone\.mjs/,
    );
    const missing = join(ws.dir, "missing.mjs");
    const m = await cli(["run", "--handlers", missing, "--db", ws.db]);
    expect(m.code).toBe(2);
    expect(m.stderr).toBe(
      `error: --handlers: expected an existing module file (${missing} does not exist), received ${JSON.stringify(missing)}\n`,
    );
  });
});

describe("duetime demo", () => {
  it("fires a burst of reminders on time, none early or lost, and exits 0 by itself", async () => {
    const db = join(ws.dir, "demo.db");
    const started = Date.now();
    const r = await cli(["demo", "--db", db], { timeoutMs: 30_000 });
    const wall = Date.now() - started;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^scheduled 200 reminders in one transaction/m);
    expect(r.stdout.match(/^ {2}# +\d+ {2}due \S+ {2}lateness +\d+ ms$/gm)).toHaveLength(200);
    expect(r.stdout).toMatch(/^\s+fired\s+200$/m);
    expect(r.stdout).toMatch(/^\s+early\s+0$/m);
    expect(r.stdout).toMatch(/^\s+lost\s+0$/m);
    expect(r.stdout).toMatch(/^\s+lateness p99\s+\d+ ms$/m);
    expect(wall).toBeLessThan(15_000);

    // Run again on the same file, machine-readable this time.
    const again = await cliJson<{
      scheduled: number;
      fired: number;
      early: number;
      lost: number;
      storedSucceeded: number;
      latenessMs: { p50: number; p99: number; max: number };
    }>(["demo", "--db", db, "--count", "50", "--lead", "300", "--spread", "500"]);
    expect(again.code).toBe(0);
    expect(again.body).toMatchObject({
      scheduled: 50,
      fired: 50,
      early: 0,
      lost: 0,
      storedSucceeded: 50,
    });
    expect(again.body.latenessMs.max).toBeGreaterThanOrEqual(again.body.latenessMs.p50);
  });

  it("refuses a database holding other pending jobs", async () => {
    await cli(["add", "in 1 hour", "--target", "real-work", "--db", ws.db]);
    const r = await cli(["demo", "--db", ws.db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --db: expected a database without pending jobs/);
  });
});
