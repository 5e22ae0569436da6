import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const worker = fileURLToPath(new URL("./dead-node-worker.ts", import.meta.url));
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

// Registered first, so its stop runs after this file's own afterAll (hooks run as a stack).
const pg = usePostgresServer();
const spawned: ChildProcess[] = [];
afterAll(() => {
  for (const p of spawned) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
});

/** A child process node; `out` collects its stdout. */
function startNode(schema: string, id: string) {
  const proc = spawn(process.execPath, ["--import", "tsx", worker, pg.url, schema, id], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  spawned.push(proc);
  const node = { proc, out: "", exited: new Promise((r) => proc.once("exit", r)) };
  proc.stdout!.on("data", (d: Buffer) => (node.out += d.toString()));
  return node;
}

/** Waits for `cond`, looking every 20 ms, up to `timeoutMs` (bounded: a failure, not a hang). */
async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let store: PostgresStore | null = null;
let survivor: Scheduler | null = null;
afterEach(async () => {
  await survivor?.stop();
  await store?.close();
  survivor = null;
  store = null;
});

/**
 * Real processes, and real time for the kill only: the default node services find a dead
 * node by its liveness lock, which no clock drives. The victim's leases are the defaults
 * (15 s, renewed every 2 s): what comes back sooner came back through the takeover.
 */
describe("postgres: a node killed with SIGKILL", () => {
  it("has its shards and claims taken over by the other node within 5 s", async () => {
    const schema = freshSchema("deadnode");
    store = await PostgresStore.open({ url: pg.url, schema, onError: () => undefined });
    const jobs = await store.jobsInsert({
      now: Date.now(),
      jobs: Array.from({ length: 40 }, (_, i) => ({
        id: `job-${String(i).padStart(3, "0")}`,
        tenant: "default",
        key: null,
        dueAt: Date.now() - 1000,
        payload: null,
        target: "hold",
        targetOptions: null,
        maxAttempts: 3,
        expireAfterMs: null,
      })),
    });
    const victim = startNode(schema, "victim");
    // alone, the victim owns every shard and starts every job (they stay claimed by it)
    await until(() => victim.out.split("started ").length - 1 === jobs.length, 20_000, "victim");
    survivor = new Scheduler({ store, nodeId: "survivor", logger: quiet });
    const fired: string[] = [];
    survivor.handle("hold", (job) => {
      fired.push(job.id);
    });
    survivor.start();
    const owners = async () =>
      (
        await store!.connection.query<{ owner: string; n: number }>(
          `SELECT owner, count(*)::int AS n FROM "${schema}".shard_leases GROUP BY owner`,
        )
      ).rows;
    // the survivor joins (a NOTIFY: the victim releases its share at once, not in 30 s)
    await until(
      async () => (await owners()).some((o) => o.owner === "survivor"),
      10_000,
      "the survivor's share of the shards",
    );
    expect(fired).toEqual([]); // every job is the victim's, running
    victim.proc.kill("SIGKILL");
    const killedAt = Date.now();
    await victim.exited;
    await until(
      async () => {
        const o = await owners();
        return o.length === 1 && o[0]!.owner === "survivor" && o[0]!.n === store!.shardCount;
      },
      5000,
      "every shard owned by the survivor",
    );
    const shardsAfterMs = Date.now() - killedAt;
    await until(() => fired.length === jobs.length, 5000 - shardsAfterMs, "the victim's jobs");
    const claimsAfterMs = Date.now() - killedAt;
    expect([...fired].sort()).toEqual(jobs.map((j) => j.job.id));
    // the takeover ended the leases (attempt counted as a lease running out would)
    await survivor.idle();
    const again = await store.jobGet({ id: jobs[0]!.job.id });
    expect(again).toMatchObject({ status: "succeeded", attempts: 2 });
    process.stderr.write(
      `dead node: shards taken over ${shardsAfterMs} ms, claims fired again ${claimsAfterMs} ms after SIGKILL\n`,
    );
    expect(claimsAfterMs).toBeLessThan(5000);
  });
});
