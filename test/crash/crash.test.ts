import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { tempDir } from "../support/temp-dir.js";

const worker = fileURLToPath(new URL("./crash-worker.ts", import.meta.url));
const dir = tempDir("duetime-crash-");
afterAll(() => dir.cleanup());

function startWorker(db: string, log: string, nodeName?: string): ChildProcess {
  return spawn(
    process.execPath,
    ["--import", "tsx", worker, db, log, ...(nodeName ? [nodeName] : [])],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
}

function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("crash safety", () => {
  it("a worker killed with SIGKILL mid-batch loses nothing; only in-flight jobs fire twice", async () => {
    const db = join(dir.path, "crash.db");
    const log = join(dir.path, "fired.log");
    const total = 3000;
    // Jobs already due: nothing waits for a due time.
    const setup = new Scheduler({ store: new SqliteStore({ path: db }), logger: silentLogger });
    const now = Date.now();
    const made = await setup.scheduleMany(
      Array.from({ length: total }, (_, i) => ({ dueAt: now - 60_000 + i, target: "record" })),
    );
    await setup.close();
    const ids = new Set(made.map((m) => m.job.id));

    const first = startWorker(db, log);
    const exited = new Promise((r) => first.once("exit", r));
    await until(() => lines(log).length >= total / 4, 60_000);
    first.kill("SIGKILL");
    await exited;
    const firedBeforeKill = lines(log).length;
    expect(firedBeforeKill).toBeLessThan(total);

    // What was in flight at the kill: claimed, lease still held by the dead process.
    const store = new SqliteStore({ path: db });
    const inFlight = new Set(
      (await store.jobsList({ statuses: ["claimed"], limit: total })).map((j) => j.id),
    );
    expect(inFlight.size).toBeGreaterThan(0);
    // Time passes beyond the lease: the dead worker's claims come back.
    const swept = await store.leasesExpire({ now: Date.now() + 120_000, limit: total });
    expect(swept).toEqual({ requeued: inFlight.size, dead: 0, nextExpiresAt: null });
    await store.close();

    const second = startWorker(db, log);
    let out = "";
    second.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise((r) => second.once("exit", r));
    expect(out).toContain("drained");
    expect(code).toBe(0);

    const fired = lines(log);
    const times = new Map<string, number>();
    for (const id of fired) times.set(id, (times.get(id) ?? 0) + 1);
    // every job fired at least once, and nothing else fired
    expect([...ids].filter((id) => !times.has(id))).toEqual([]);
    expect([...times.keys()].filter((id) => !ids.has(id))).toEqual([]);
    // duplicates are only jobs that were in flight at the kill
    const duplicated = [...times].filter(([, n]) => n > 1).map(([id]) => id);
    expect(duplicated.filter((id) => !inFlight.has(id))).toEqual([]);
    expect(Math.max(...times.values())).toBeLessThanOrEqual(2);

    const check = new SqliteStore({ path: db });
    expect(await check.jobsCountByStatus({})).toMatchObject({
      succeeded: total,
      pending: 0,
      claimed: 0,
    });
    await check.close();
    console.log(
      `crash test: ${total} jobs, ${firedBeforeKill} fired before SIGKILL, ${inFlight.size} in flight, ${duplicated.length} fired twice`,
    );
  });

  it("a restarted worker of the same node name takes the dead one's claims back at once, not after the lease", async () => {
    const db = join(dir.path, "restart.db");
    const log = join(dir.path, "restart.log");
    const total = 3000;
    const setup = new Scheduler({ store: new SqliteStore({ path: db }), logger: silentLogger });
    const now = Date.now();
    await setup.scheduleMany(
      Array.from({ length: total }, (_, i) => ({ dueAt: now - 60_000 + i, target: "record" })),
    );
    await setup.close();

    const first = startWorker(db, log, "crash-node");
    const exited = new Promise((r) => first.once("exit", r));
    await until(() => lines(log).length >= total / 4, 60_000);
    first.kill("SIGKILL");
    await exited;
    const killedAt = Date.now();
    const store = new SqliteStore({ path: db });
    const stranded = await store.jobsList({ statuses: ["claimed"], limit: total });
    await store.close();
    expect(stranded.length).toBeGreaterThan(0);
    // the dead worker's leases run 60 s; nothing sweeps them here
    expect(Math.min(...stranded.map((j) => j.leaseExpiresAt!))).toBeGreaterThan(killedAt + 30_000);

    const second = startWorker(db, log, "crash-node");
    let out = "";
    second.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise((r) => second.once("exit", r));
    const drainedAfterMs = Date.now() - killedAt;
    expect(out).toContain("drained");
    expect(code).toBe(0);
    // well inside the 60 s lease: the restart gave the claims back itself
    expect(drainedAfterMs).toBeLessThan(30_000);
    const check = new SqliteStore({ path: db });
    expect(await check.jobsCountByStatus({})).toMatchObject({ succeeded: total, claimed: 0 });
    // given back, not expired: the dead process's attempt was not counted
    for (const j of stranded) {
      expect(await check.jobGet({ id: j.id })).toMatchObject({ status: "succeeded", attempts: 1 });
    }
    await check.close();
    console.log(
      `restart test: ${stranded.length} claims stranded by SIGKILL, all fired ${drainedAfterMs} ms after the kill`,
    );
  });
});
