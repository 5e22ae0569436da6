import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/temp-dir.js";

const worker = fileURLToPath(new URL("./series-worker.ts", import.meta.url));
const dir = tempDir("duetime-series-crash-");
afterAll(() => dir.cleanup());

/** Runs the worker to its end (or its own SIGKILL); resolves to its exit signal. */
function run(args: string[]): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", worker, ...args], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => resolve(signal));
  });
}

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const second = (n: number) => new Date(T0 + n * 1000).toISOString().slice(0, 19);

describe("series crash safety", () => {
  it("a process killed after an occurrence's claim committed: the restart goes on, no occurrence skipped or written twice", async () => {
    const db = join(dir.path, "series.db");
    const log = join(dir.path, "fired.log");
    // the 4th occurrence's handler kills the process: its claim (and the 5th occurrence) are written
    const killed = await run([db, log, String(T0), second(4), "1000"]);
    expect(killed).toBe("SIGKILL");
    const before = readFileSync(log, "utf8").split("\n").filter(Boolean);
    expect(before).toEqual([second(1), second(2), second(3), second(4)]);
    // restarted 10 s later (the killed claim's 2 s lease has run out): fire-all catches up
    const signal = await run([db, log, String(T0 + 14_000), "-", "20"]);
    expect(signal).toBeNull();
    const fired = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
    const conn = new Database(db, { readonly: true });
    const rows = conn
      .prepare(
        `SELECT nominal, count(*) AS n FROM jobs WHERE schedule_id IS NOT NULL
         GROUP BY nominal ORDER BY nominal`,
      )
      .all() as { nominal: string; n: number }[];
    conn.close();
    // one job per occurrence, contiguous: nothing skipped, nothing written twice
    expect(rows.every((r) => r.n === 1)).toBe(true);
    const nominals = rows.map((r) => r.nominal);
    expect(nominals).toEqual(Array.from({ length: nominals.length }, (_, i) => second(i + 1)));
    // the killed occurrence fired again (at least once); every other fired exactly once
    const times = new Map<string, number>();
    for (const f of fired) times.set(f, (times.get(f) ?? 0) + 1);
    expect(times.get(second(4))).toBe(2);
    for (let i = 1; i <= 20; i++) if (i !== 4) expect(times.get(second(i)), second(i)).toBe(1);
  });
});
