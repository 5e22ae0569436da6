import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { insertAll, jobMaker } from "./helpers.js";

const worker = fileURLToPath(new URL("./node-worker.ts", import.meta.url));
/** Issue sizes by default; PG_CRASH_JOBS / PG_CRASH_WINDOW_MS shrink them on slow machines. */
const JOBS = Number(process.env.PG_CRASH_JOBS ?? 50_000);
const WINDOW_MS = Number(process.env.PG_CRASH_WINDOW_MS ?? 20_000);

// Registered first, so its stop runs after this file's own afterAll (hooks run as a stack).
// halts or restarts its server: one of its own, not its worker's shared one
const pg = usePostgresServer({ own: true });
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "duetime-pg-nodes-"));
});
const spawned: ChildProcess[] = [];
afterAll(() => {
  for (const p of spawned) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

interface Node {
  readonly id: string;
  readonly proc: ChildProcess;
  out: string;
  readonly exited: Promise<number | null>;
}

function startNode(schema: string, id: string, log: string): Node {
  const proc = spawn(process.execPath, ["--import", "tsx", worker, pg.url, schema, id, log], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  spawned.push(proc);
  const node: Node = {
    id,
    proc,
    out: "",
    exited: new Promise((r) => proc.once("exit", (code) => r(code))),
  };
  proc.stdout!.on("data", (d: Buffer) => (node.out += d.toString()));
  return node;
}

function firings(log: string): { id: string; node: string; fence: number }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [id, node, fence] = l.split(" ");
      return { id: id!, node: node!, fence: Number(fence) };
    });
}

async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopNode(n: Node): Promise<void> {
  n.proc.kill("SIGTERM");
  expect(await n.exited).toBe(0);
  expect(n.out).toContain("stopped");
}

/**
 * Real processes and real time (the jobs are due over a window of wall-clock time), so
 * these are the slow tests of the suite; everything else runs on explicit `now` values.
 */
describe("postgres: scheduler processes sharing one database", () => {
  it(`fires ${JOBS} jobs due over ${WINDOW_MS / 1000} s on 3 nodes, one SIGKILLed midway, each once per claim`, async () => {
    const schema = freshSchema("nodes");
    const log = join(dir, "three.log");
    const setup = await PostgresStore.open({ url: pg.url, schema });
    const start = Date.now() + 3000;
    const job = jobMaker(Date.now());
    const jobs = Array.from({ length: JOBS }, (_, i) =>
      job(start + Math.floor((i * WINDOW_MS) / JOBS), { target: "record" }),
    );
    await insertAll(setup, jobs, Date.now());
    const nodes = ["node-a", "node-b", "node-c"].map((id) => startNode(schema, id, log));
    await until(() => nodes.every((n) => n.out.includes("started")), 30_000, "nodes to start");
    for (const n of nodes) expect(n.proc.exitCode).toBeNull();

    await until(() => firings(log).length >= JOBS / 2, WINDOW_MS + 30_000, "half the jobs");
    const victim = nodes[0]!;
    victim.proc.kill("SIGKILL");
    await victim.exited;
    // in flight at the kill: claimed by the dead node (its leases have not run out yet)
    const inFlight = new Set(
      (
        await setup.connection.query<{ id: string }>(
          // lease owners are <node name>/<incarnation>
          `SELECT id FROM "${schema}".jobs_claimed WHERE starts_with(lease_owner, $1 || '/')`,
          [victim.id],
        )
      ).rows.map((r) => r.id),
    );

    await until(
      async () => {
        const c = await setup.jobsCountByStatus({});
        return c.succeeded === JOBS;
      },
      WINDOW_MS + 60_000,
      "every job to succeed",
    );
    await Promise.all(nodes.slice(1).map(stopNode));

    const fired = firings(log);
    const byId = new Map<string, { node: string; fence: number }[]>();
    for (const f of fired) byId.set(f.id, [...(byId.get(f.id) ?? []), f]);
    expect(jobs.filter((j) => !byId.has(j.id)).map((j) => j.id)).toEqual([]);
    expect(byId.size).toBe(JOBS);
    // never fired twice under one claim (same fence)
    const sameClaim = [...byId].filter(
      ([, fs]) => new Set(fs.map((f) => f.fence)).size < fs.length,
    );
    expect(sameClaim.map(([id]) => id)).toEqual([]);
    // fired twice only if the dead node held it at the kill
    const duplicated = [...byId].filter(([, fs]) => fs.length > 1).map(([id]) => id);
    expect(duplicated.filter((id) => !inFlight.has(id))).toEqual([]);
    const perNode = ["node-a", "node-b", "node-c"].map(
      (n) => fired.filter((f) => f.node === n).length,
    );
    expect(Math.min(...perNode)).toBeGreaterThan(0);
    console.log(
      `3 nodes: ${JOBS} jobs over ${WINDOW_MS} ms, fired per node ${perNode.join("/")}, ` +
        `${inFlight.size} in flight at SIGKILL, ${duplicated.length} fired twice`,
    );
    await setup.connection.query(`DROP SCHEMA "${schema}" CASCADE`);
    await setup.close();
  }, 180_000);

  it("rides out a PostgreSQL restart mid-run: nothing lost, no crash", async (ctx) => {
    if (!pg.server.owned) ctx.skip(); // PG_URL: not ours to restart
    const schema = freshSchema("restart");
    const log = join(dir, "restart.log");
    const total = Math.min(JOBS, 10_000);
    const setup = await PostgresStore.open({ url: pg.url, schema });
    const start = Date.now() + 2000;
    const job = jobMaker(Date.now());
    const jobs = Array.from({ length: total }, (_, i) =>
      job(start + Math.floor((i * 8000) / total), { target: "record" }),
    );
    await insertAll(setup, jobs, Date.now());
    await setup.close();
    const nodes = ["node-a", "node-b"].map((id) => startNode(schema, id, log));
    await until(() => nodes.every((n) => n.out.includes("started")), 30_000, "nodes to start");
    for (const n of nodes) expect(n.proc.exitCode).toBeNull();
    await until(() => firings(log).length >= total / 3, 60_000, "a third of the jobs");
    await pg.server.restart();

    const check = await PostgresStore.open({ url: pg.url, schema });
    await until(
      async () => (await check.jobsCountByStatus({})).succeeded === total,
      90_000,
      "every job to succeed after the restart",
    );
    for (const n of nodes) expect(n.proc.exitCode).toBeNull(); // still running
    await Promise.all(nodes.map(stopNode));
    const ids = new Set(firings(log).map((f) => f.id));
    expect(jobs.filter((j) => !ids.has(j.id))).toEqual([]);
    console.log(
      `restart: ${total} jobs, ${firings(log).length} firings, errors logged ${nodes
        .map((n) => /errors (\d+)/.exec(n.out)?.[1])
        .join("/")}`,
    );
    await check.close();
  }, 180_000);
});
