import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import type { Job } from "../../src/core/job.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { silentLogger, trackCalls } from "../support/harness.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const T0 = Date.UTC(2026, 6, 1, 9, 0, 0);
const pg = usePostgresServer();

/** A scheduler node on the shared schema and clock, recording what it fires. */
async function node(schema: string, clock?: ManualClock) {
  const store = await PostgresStore.open({ url: pg.url, schema, poolSize: 4 });
  Object.defineProperty(store, "clockRead", { value: undefined });
  const idle = trackCalls(store);
  const c = clock ?? new ManualClock(T0, { settle: idle });
  const scheduler = new Scheduler({
    store,
    clock: c,
    logger: silentLogger,
    shards: () => undefined,
  });
  const fired: Job[] = [];
  scheduler.handle("mail", (job: Job) => void fired.push(job));
  // settled: resolves when none of this node's store calls is in flight
  return { store, clock: c, scheduler, fired, settled: idle };
}

/**
 * Pauses across nodes (issue 13 §4): two schedulers on one PostgreSQL schema. A pause made
 * through node A is honoured by node B, including the claim B already holds in its timing
 * wheel (handed back when A's notification reaches it); a resume through B lets A fire.
 */
describe("postgres: a pause holds on every node", () => {
  let a: Awaited<ReturnType<typeof node>>;
  let b: Awaited<ReturnType<typeof node>>;

  beforeAll(async () => {
    const schema = freshSchema("pausecl");
    a = await node(schema);
    b = await node(schema, a.clock);
  });
  afterAll(async () => {
    for (const n of [a, b]) {
      await n?.scheduler.stop({ timeoutMs: 1000 });
      await n?.store.close();
    }
  });

  it("pause via A: B hands back its waiting claim and fires nothing; resume via B: A fires", async () => {
    const { job } = await b.scheduler.schedule({ target: "mail", dueAt: T0 + 500 });
    b.scheduler.start();
    await b.store.listening();
    await b.scheduler.runOnce();
    // claimed ahead of its due time: waiting in B's timing wheel
    expect((await a.scheduler.get(job.id))!.status).toBe("claimed");

    const told = new Promise<void>((resolve) => b.store.pauses.onPausesChanged(resolve));
    const p = await a.scheduler.pause({ scope: { target: "mail" } });
    await told;
    // B's wheel empties only by handing the claim back (the clock has not moved)
    await b.scheduler.idle();
    await b.settled();
    const { job: later } = await b.scheduler.schedule({ target: "mail", dueAt: T0 + 600 });
    expect(later.pausedBy).toBe(p.id);

    await a.clock.advance(60_000);
    // a watcher pass of B's: the claim holds the handed-back job it meets. B's own loop,
    // woken by the advance, may claim first: runOnce's claim then skips the locked row, and
    // only settled() waits for the loop's claim (and its hold) to commit.
    await b.scheduler.runOnce();
    await b.scheduler.idle();
    await b.settled();
    expect(b.fired).toEqual([]);
    for (const id of [job.id, later.id]) {
      expect(await a.scheduler.get(id)).toMatchObject({ status: "pending", pausedBy: p.id });
    }
    expect((await b.scheduler.stats()).paused).toEqual({ jobs: 2, activePauses: 1 });

    await b.scheduler.stop({ timeoutMs: 1000 });
    expect(await b.scheduler.resume(p.id)).toMatchObject({ id: p.id, state: "resuming" });
    await b.settled();
    // B's resume gave the jobs back (its own pass, or A's keeper's next one)
    a.scheduler.start();
    await a.clock.advance(6000);
    await a.scheduler.idle();
    expect(await a.scheduler.getPause(p.id)).toMatchObject({ state: "resumed", heldJobs: 0 });
    // the release may have been B's pass, whose commit reaches A's watcher only by NOTIFY:
    // wait for B's calls, then a pass of A's claims what was given back (its own loop may
    // claim first; runOnce then skips the locked rows and settled() waits for that claim)
    await b.settled();
    await a.scheduler.runOnce();
    await a.scheduler.idle();
    await a.settled();
    await a.scheduler.idle();
    expect(a.fired.map((j) => j.id).sort()).toEqual([job.id, later.id].sort());
    expect(b.fired).toEqual([]);
    const first = a.fired.find((j) => j.id === job.id)!;
    // handed back unstarted and held: the attempt B's claim made is not counted
    expect(first.attempts).toBe(1);
  }, 20_000);
});
