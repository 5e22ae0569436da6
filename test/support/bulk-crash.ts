/**
 * The bulk crash scenario, the same on every store (test/crash/bulk-crash*.test.ts): 3,600
 * jobs (3,000 tagged user:42, interleaved with the others), a reschedule by the tag shifting
 * each 1 h, run in a real child process (bulk-worker.ts: batches of 50, each batch's
 * progress a JSON line) that is SIGKILLed on the first line past a third. The record then
 * says running with whole batches scanned, as many as the rescheduled changes committed; a
 * restart (runUnfinished again, in the test's process) resumes from the stored cursor to done with scanned = changed = 3,000 and
 * skipped 0, every tagged job due exactly one shift later (a batch acted on twice shows two),
 * the 600 others as they were, one rescheduled change per tagged job.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { openStore } from "../../src/stores/open-store.js";
import { BULK_T0 as T0, runUnfinished } from "./bulk-worker.js";
import { silentLogger } from "./harness.js";

const worker = fileURLToPath(new URL("./bulk-worker.ts", import.meta.url));

const DAY = 86_400_000;
const SHIFT = 3_600_000;
const TAGGED = 3000;
const OTHERS = 600;

/** The database under test, as the worker opens it, and what only its own tables tell. */
export interface BulkCrashTarget {
  /** A SQLite file or a postgres:// URL with ?schema= (createScheduler's `db`). */
  readonly db: string;
  /**
   * Rescheduled changes committed per job id, read from the store's change table itself:
   * PostgreSQL's feed (changesRead) shows nothing past a transaction still open, and the
   * killed worker's may not have been rolled back yet when the test looks.
   */
  rescheduledPerJob(): Promise<Map<string, number>>;
}

interface Progress {
  scanned: number;
  changed: number;
  skipped: number;
  state: string;
}

/**
 * Runs the worker; resolves to the progress lines it printed and its exit signal. It
 * SIGKILLs it once a line shows that many jobs scanned, at a point drawn at random
 * over the next batch's interval (the last gap between two lines: the worker's 10 ms wait,
 * then the batch's reads and its transaction). Killed on the line itself, it would nearly
 * always die in the wait, and a batch whose moves and progress commit apart would pass;
 * each run tries another point, and every point must hold.
 */
function runKilled(
  db: string,
  killAt: number,
): Promise<{ lines: Progress[]; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", worker, db], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines: Progress[] = [];
    let rest = "";
    let lastAt = performance.now();
    let aimed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      const at = performance.now();
      for (const p of parts) {
        const line = JSON.parse(p) as Progress;
        lines.push(line);
        if (line.scanned >= killAt && !aimed) {
          aimed = true;
          setTimeout(() => child.kill("SIGKILL"), Math.random() * (at - lastAt));
        }
      }
      lastAt = at;
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => resolve({ lines, signal }));
  });
}

/** Seeds the jobs and queues the reschedule; the jobs' due times and the tagged ids. */
async function seed(target: BulkCrashTarget) {
  const store = await openStore(target.db);
  const setup = new Scheduler({ store, clock: new ManualClock(T0), logger: silentLogger });
  try {
    // tagged and untagged jobs interleaved, each at its own due time a day ahead
    const made = await setup.scheduleMany(
      Array.from({ length: TAGGED + OTHERS }, (_, i) => ({
        dueAt: T0 + DAY + i * 1000,
        target: "remind",
        ...(i % 6 === 5 ? {} : { tags: ["user:42"] }),
      })),
    );
    const { operation: op } = await setup.startOperation({
      kind: "reschedule",
      filter: { tags: ["user:42"] },
      shiftMs: SHIFT,
    });
    return {
      opId: op.id,
      due: new Map(made.map((m) => [m.job.id, m.job.dueAt])),
      tagged: new Set(made.filter((m) => m.job.tags.length > 0).map((m) => m.job.id)),
    };
  } finally {
    await setup.close();
  }
}

const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

export async function bulkCrashScenario(target: BulkCrashTarget): Promise<void> {
  const { opId, due, tagged } = await seed(target);
  expect(tagged.size).toBe(TAGGED);

  const killed = await runKilled(target.db, TAGGED / 3);
  expect(killed.signal).toBe("SIGKILL");
  const reached = killed.lines.at(-1)!;
  expect(reached.scanned).toBeGreaterThanOrEqual(TAGGED / 3);
  expect(reached.scanned).toBeLessThan(TAGGED);

  // what the record says at the kill: whole batches only, the operation not done, and the
  // batches it counts are exactly the ones whose moves committed
  const between = await openStore(target.db);
  const atKill = (await between.operationGet({ id: opId }))!;
  await between.close();
  expect(atKill.state).toBe("running");
  expect(atKill.scanned).toBeGreaterThanOrEqual(reached.scanned);
  expect(atKill.scanned).toBeLessThan(TAGGED);
  expect(atKill.scanned % 50).toBe(0);
  expect(sum(await target.rescheduledPerJob())).toBe(atKill.scanned);

  // the restart, in this process (a second child would only add its start-up)
  const resumed = await runUnfinished(target.db, () => {});
  expect(resumed).toMatchObject({
    state: "done",
    scanned: TAGGED,
    changed: TAGGED,
    skipped: 0,
  });

  // every tagged job moved by exactly one shift (twice would be two), no other job moved
  const after = await openStore(target.db);
  const jobs = await after.jobsList({ limit: 10_000 });
  await after.close();
  expect(jobs).toHaveLength(TAGGED + OTHERS);
  const wrong = jobs.filter(
    (j) => j.status !== "pending" || j.dueAt !== due.get(j.id)! + (tagged.has(j.id) ? SHIFT : 0),
  );
  expect(wrong).toEqual([]);
  // and one rescheduled change each: none acted on twice, none missed
  const feed = await target.rescheduledPerJob();
  expect(feed.size).toBe(TAGGED);
  expect([...feed].every(([id, n]) => n === 1 && tagged.has(id))).toBe(true);
}
