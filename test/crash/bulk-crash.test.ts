import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { tempDir } from "../support/temp-dir.js";

const worker = fileURLToPath(new URL("./bulk-worker.ts", import.meta.url));
const dir = tempDir("duetime-bulk-crash-");
afterAll(() => dir.cleanup());

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const DAY = 86_400_000;
const SHIFT = 3_600_000;
const TAGGED = 3000;
const OTHERS = 600;

interface Progress {
  scanned: number;
  changed: number;
  skipped: number;
  state: string;
}

/**
 * Runs the worker; resolves to the progress lines it printed and its exit signal. With
 * `killAt`, SIGKILLs it as soon as a line shows that many jobs scanned: the worker is then
 * somewhere in a later batch (inside its transaction, or between two), wherever it got to.
 */
function run(db: string, killAt?: number): Promise<{ lines: Progress[]; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", worker, db, String(T0)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines: Progress[] = [];
    let rest = "";
    child.stdout.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      for (const p of parts) {
        const line = JSON.parse(p) as Progress;
        lines.push(line);
        if (killAt !== undefined && line.scanned >= killAt) child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => resolve({ lines, signal }));
  });
}

describe("bulk operation crash safety", () => {
  it("a bulk reschedule killed halfway resumes on restart and moves every matching job exactly once", async () => {
    const db = join(dir.path, "bulk.db");
    const setup = new Scheduler({
      store: new SqliteStore({ path: db }),
      clock: new ManualClock(T0),
      logger: silentLogger,
    });
    // tagged and untagged jobs interleaved, each at its own due time a day ahead
    const made = await setup.scheduleMany(
      Array.from({ length: TAGGED + OTHERS }, (_, i) => ({
        dueAt: T0 + DAY + i * 1000,
        target: "remind",
        ...(i % 6 === 5 ? {} : { tags: ["user:42"] }),
      })),
    );
    const due = new Map(made.map((m) => [m.job.id, m.job.dueAt]));
    const tagged = new Set(made.filter((m) => m.job.tags.length > 0).map((m) => m.job.id));
    expect(tagged.size).toBe(TAGGED);
    const op = await setup.startOperation({
      kind: "reschedule",
      filter: { tags: ["user:42"] },
      shiftMs: SHIFT,
    });
    await setup.close();

    const killed = await run(db, TAGGED / 3);
    expect(killed.signal).toBe("SIGKILL");
    const reached = killed.lines.at(-1)!;
    expect(reached.scanned).toBeGreaterThanOrEqual(TAGGED / 3);
    expect(reached.scanned).toBeLessThan(TAGGED);

    const conn = new Database(db, { readonly: true });
    const stored = conn.prepare("SELECT scanned, state FROM operations WHERE id = ?");
    // what the record says at the kill: whole batches only, the operation not done
    const atKill = stored.get(op.id) as { scanned: number; state: string };
    expect(atKill.state).toBe("running");
    expect(atKill.scanned).toBeGreaterThanOrEqual(reached.scanned);
    expect(atKill.scanned).toBeLessThan(TAGGED);
    const movedAtKill = conn
      .prepare("SELECT count(*) AS n FROM changes WHERE kind = 'rescheduled'")
      .get() as { n: number };
    expect(movedAtKill.n).toBe(atKill.scanned);

    const resumed = await run(db);
    expect(resumed.signal).toBeNull();
    expect(resumed.lines.at(-1)).toMatchObject({
      state: "done",
      scanned: TAGGED,
      changed: TAGGED,
      skipped: 0,
    });

    // every tagged job moved by exactly one shift (twice would be two), no other job moved
    const store = new SqliteStore({ path: db });
    const jobs = await store.jobsList({ limit: 10_000 });
    await store.close();
    expect(jobs).toHaveLength(TAGGED + OTHERS);
    const wrong = jobs.filter(
      (j) => j.status !== "pending" || j.dueAt !== due.get(j.id)! + (tagged.has(j.id) ? SHIFT : 0),
    );
    expect(wrong).toEqual([]);
    // and one rescheduled change each: none acted on twice, none missed
    const feed = conn
      .prepare(
        "SELECT job_id, count(*) AS n FROM changes WHERE kind = 'rescheduled' GROUP BY job_id",
      )
      .all() as { job_id: string; n: number }[];
    conn.close();
    expect(feed).toHaveLength(TAGGED);
    expect(feed.every((f) => f.n === 1 && tagged.has(f.job_id))).toBe(true);
  });
});
