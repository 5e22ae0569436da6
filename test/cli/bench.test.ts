import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cli, cliJson, ensureBuilt, startCli, tempWorkspace } from "./helpers.js";

beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

interface Rate {
  jobs: number;
  ms: number;
  perSecond: number;
}

const scratchDirs = (): string[] =>
  readdirSync(ws.dir).filter((f) => f.startsWith("duetime-bench-"));

describe("duetime bench", () => {
  it("measures every phase on a scratch file in --dir, fires every job once and on time, and deletes the file", async () => {
    const r = await cliJson<{
      db: string;
      backlog: number;
      bulk: Rate;
      oneAtATime: Rate;
      dispatch: Rate & { lost: number; duplicated: number };
      precision: {
        jobs: number;
        windowMs: number;
        latenessMs: { p50: number; p99: number; max: number };
        early: number;
        lost: number;
        duplicated: number;
        leadMissed: boolean;
      };
      stored: { succeeded: number; pending: number };
    }>(["bench", "--jobs", "2000", "--window", "300", "--dir", ws.dir]);
    expect(r.code).toBe(0);
    const b = r.body;
    expect(b.db.startsWith(join(ws.dir, "duetime-bench-"))).toBe(true);
    expect(b.backlog).toBe(2200);
    expect(b.bulk.jobs).toBe(2000);
    expect(b.oneAtATime.jobs).toBe(200);
    expect(b.dispatch).toMatchObject({ jobs: 1000, lost: 0, duplicated: 0 });
    for (const rate of [b.bulk, b.oneAtATime, b.dispatch]) {
      expect(rate.ms).toBeGreaterThan(0);
      // perSecond comes from the unrounded time; ms is rounded to 0.1
      const fromMs = rate.jobs / (rate.ms / 1000);
      expect(Math.abs(rate.perSecond - fromMs) / fromMs).toBeLessThan(0.02);
    }
    expect(b.precision).toMatchObject({
      jobs: 200,
      windowMs: 300,
      early: 0,
      lost: 0,
      duplicated: 0,
    });
    expect(b.precision.latenessMs.p50).toBeGreaterThanOrEqual(0);
    expect(b.precision.latenessMs.p99).toBeGreaterThanOrEqual(b.precision.latenessMs.p50);
    expect(b.precision.latenessMs.max).toBeGreaterThanOrEqual(b.precision.latenessMs.p99);
    // what the store recorded: every fired job succeeded, the far-future backlog still pending
    expect(b.stored).toEqual({ succeeded: 1200, pending: 2200 });
    expect(scratchDirs()).toEqual([]);
  });

  it("prints a table without --json", async () => {
    const r = await cli(["bench", "--jobs", "1000", "--window", "200", "--dir", ws.dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^bulk schedule \(scheduleMany\) +1,000 +[\d,]+\/s$/m);
    expect(r.stdout).toMatch(/^precision: early \/ lost \/ duplicated +100 +0 \/ 0 \/ 0$/m);
    expect(r.stdout).toMatch(/^stored: succeeded \/ pending +600 \/ 1,100$/m);
    expect(r.stdout).toMatch(
      /^every job fired once, none early, none lost; every outcome stored\.$/m,
    );
  });

  it("removes its scratch file when interrupted", async () => {
    const run = startCli(["bench", "--jobs", "1000000", "--dir", ws.dir]);
    await run.waitFor(/^duetime bench on /m);
    expect(scratchDirs()).toHaveLength(1);
    run.child.kill("SIGINT");
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(scratchDirs()).toEqual([]);
  });

  it("refuses bad sizes, a bad --dir and --db by name", async () => {
    const small = await cli(["bench", "--jobs", "10", "--dir", ws.dir]);
    expect(small.code).toBe(2);
    expect(small.stderr).toBe(
      'error: --jobs: expected an integer from 1000 to 10000000, received "10"\n',
    );
    const missing = join(ws.dir, "missing");
    const noDir = await cli(["bench", "--dir", missing]);
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toBe(
      `error: --dir: expected an existing, writable directory, received ${JSON.stringify(missing)}\n`,
    );
    const file = join(ws.dir, "a-file");
    writeFileSync(file, "");
    const notDir = await cli(["bench", "--dir", file]);
    expect(notDir.code).toBe(2);
    expect(notDir.stderr).toMatch(/^error: --dir: expected an existing, writable directory/);
    const db = await cli(["bench", "--db", ws.db, "--dir", ws.dir]);
    expect(db.code).toBe(2);
    expect(db.stderr).toMatch(/^error: --db: expected no --db \(bench makes a scratch file/);
    expect(scratchDirs()).toEqual([]);
  });
});
