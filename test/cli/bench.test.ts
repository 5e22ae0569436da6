import { readdirSync } from "node:fs";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cli, cliJson, ensureBuilt, tempWorkspace } from "./helpers.js";

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

describe("duetime bench", () => {
  it("measures every phase on a scratch file in --dir, fires every precision job once and on time, and deletes the file", async () => {
    const r = await cliJson<{
      backlog: number;
      bulk: Rate;
      oneAtATime: Rate;
      dispatch: Rate;
      precision: {
        jobs: number;
        windowMs: number;
        latenessMs: { p50: number; p99: number; max: number };
        early: number;
        lost: number;
        duplicated: number;
      };
    }>(["bench", "--jobs", "2000", "--window", "300", "--dir", ws.dir, "--json"]);
    expect(r.code).toBe(0);
    const b = r.body;
    expect(b.backlog).toBe(2200);
    expect(b.bulk.jobs).toBe(2000);
    expect(b.oneAtATime.jobs).toBe(200);
    expect(b.dispatch.jobs).toBe(1000);
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
    // the scratch directory it made inside --dir is gone
    expect(readdirSync(ws.dir).filter((f) => f.startsWith("duetime-bench-"))).toEqual([]);
  });

  it("prints a table without --json", async () => {
    const r = await cli(["bench", "--jobs", "1000", "--window", "200", "--dir", ws.dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^bulk schedule \(scheduleMany\) +1,000 +[\d,]+\/s$/m);
    expect(r.stdout).toMatch(/^precision: early \/ lost \/ duplicated +100 +0 \/ 0 \/ 0$/m);
    expect(r.stdout).toMatch(/^every precision job fired, none early, none lost\.$/m);
  });

  it("refuses bad sizes and --db by name", async () => {
    const small = await cli(["bench", "--jobs", "10", "--dir", ws.dir]);
    expect(small.code).toBe(2);
    expect(small.stderr).toBe(
      'error: --jobs: expected an integer from 1000 to 10000000, received "10"\n',
    );
    const db = await cli(["bench", "--db", ws.db, "--dir", ws.dir]);
    expect(db.code).toBe(2);
    expect(db.stderr).toMatch(/^error: --db: expected no --db: bench runs on a scratch file/);
    expect(readdirSync(ws.dir)).toEqual([]);
  });
});
