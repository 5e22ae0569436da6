import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { dashboardPlugin } from "../../src/dashboard/plugin.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { silentLogger, trackCalls } from "../support/harness.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { nextMatching, sseFrames, type SseFrame } from "../support/sse.js";

const T0 = Date.UTC(2026, 6, 1, 9, 0, 0);
const pg = usePostgresServer();

/** A scheduler node on the shared schema, on the test's clock (the skew check left out). */
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
  return { store, clock: c, scheduler };
}

/**
 * `GET /v1/events` on node A while node B, another scheduler on the same PostgreSQL
 * schema, fires and changes jobs: B's work reaches A's stream only through the durable feed.
 */
describe("postgres: the event stream follows every node", () => {
  let a: Awaited<ReturnType<typeof node>>;
  let b: Awaited<ReturnType<typeof node>>;
  let app: FastifyInstance;
  let base: string;
  const controllers: AbortController[] = [];

  beforeAll(async () => {
    const schema = freshSchema("sse");
    b = await node(schema);
    a = await node(schema, b.clock);
    app = Fastify({ logger: false });
    await app.register(dashboardPlugin, {
      scheduler: a.scheduler,
      authenticate: async (req) =>
        req.headers.authorization === "Bearer key-acme" ? "acme" : null,
      events: { pollMs: 20 },
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    for (const c of controllers) c.abort();
    await app?.close();
    for (const n of [b, a]) {
      await n?.scheduler.stop({ timeoutMs: 1000 });
      await n?.store.close();
    }
  });

  async function connect(lastEventId?: string) {
    const c = new AbortController();
    controllers.push(c);
    const headers: Record<string, string> = { authorization: "Bearer key-acme" };
    if (lastEventId) headers["last-event-id"] = lastEventId;
    const res = await fetch(`${base}/v1/events`, { headers, signal: c.signal });
    expect(res.status).toBe(200);
    const s = sseFrames(res);
    const hello = await nextMatching(s, (f) => f.event === "hello");
    return { ...s, hello, close: () => c.abort() };
  }
  const isJob = (f: SseFrame) => f.event === "job";
  async function jobs(s: Awaited<ReturnType<typeof connect>>, n: number) {
    const out: { cursor: string; kind: string; id: string }[] = [];
    while (out.length < n) {
      const f = await nextMatching(s, isJob);
      const c = JSON.parse(f.data!) as { cursor: string; kind: string; id: string };
      expect(c.cursor).toBe(f.id);
      out.push(c);
    }
    return out;
  }

  it("shows a job fired by node B on node A's stream, each transition in order", async () => {
    const stream = await connect();
    b.scheduler.handle("report", () => "sent");
    const { job } = await b.scheduler.schedule({
      tenant: "acme",
      dueAt: T0 + 100,
      target: "report",
    });
    b.scheduler.start();
    await b.clock.advance(1_000);
    await b.scheduler.idle();
    await b.scheduler.stop({ timeoutMs: 1000 });
    const seen = await jobs(stream, 3);
    expect(seen.map((c) => [c.kind, c.id])).toEqual([
      ["scheduled", job.id],
      ["claimed", job.id],
      ["succeeded", job.id],
    ]);
    stream.close();
  });

  it("resumes after a disconnect with Last-Event-ID: no gap, no repeat", async () => {
    const first = await connect();
    const { job } = await b.scheduler.schedule({
      tenant: "acme",
      dueAt: T0 + 3_600_000,
      target: "report",
    });
    const [seen] = await jobs(first, 1);
    expect(seen).toMatchObject({ kind: "scheduled", id: job.id });
    first.close();
    // While A's client is away: B reschedules and cancels, A schedules one more.
    await b.scheduler.reschedule(job.id, T0 + 7_200_000);
    await b.scheduler.cancel(job.id);
    const { job: other } = await a.scheduler.schedule({
      tenant: "acme",
      dueAt: T0 + 3_600_000,
      target: "report",
    });
    const missed = (await a.scheduler.changes({ tenant: "acme", after: seen!.cursor })).changes;
    expect(missed.map((c) => [c.kind, c.id])).toEqual([
      ["rescheduled", job.id],
      ["cancelled", job.id],
      ["scheduled", other.id],
    ]);
    const resumed = await connect(seen!.cursor);
    expect(resumed.hello.id).toBe(seen!.cursor);
    const got = await jobs(resumed, missed.length);
    expect(got.map((c) => c.cursor)).toEqual(missed.map((c) => c.cursor));
    // Nothing repeated after them: the next event is a change made now, by B.
    const { job: marker } = await b.scheduler.schedule({
      tenant: "acme",
      dueAt: T0 + 3_600_000,
      target: "report",
    });
    const [next] = await jobs(resumed, 1);
    expect(next).toMatchObject({ kind: "scheduled", id: marker.id });
    resumed.close();
  });
});
