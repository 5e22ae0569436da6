import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { createClient } from "../../src/client/index.js";
import { ManualClock } from "../../src/core/clock.js";
import { createApiKey, openKeyStore } from "../../src/service/keys.js";
import { ServiceMetrics } from "../../src/service/metrics.js";
import { buildServer } from "../../src/service/server.js";
import type { Store } from "../../src/store/store.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { tempDir } from "../support/temp-dir.js";
import { startReceiver, startTestService, type Receiver, type TestService } from "./helpers.js";

/** /v1/pauses over real HTTP on 127.0.0.1, a SQLite file and a ManualClock. */
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const MINUTE = 60_000;

let t: TestService | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

/** Every pause of acme in any state (what a refused request must leave as it was). */
async function allPauses(): Promise<unknown[]> {
  return (await t!.api("GET", "/v1/pauses?state=active,resuming,resumed")).body.pauses;
}

function gauge(metrics: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(metrics);
  if (!m) throw new Error(`no ${name} in /metrics`);
  return Number(m[1]);
}

it("a paused webhook origin does not fire; DELETE resumes it and it fires late; tenants are apart", async () => {
  const clock = new ManualClock(T0);
  t = await startTestService({ clock });
  const paused = await receiver();
  const other = await receiver();
  const origin = new URL(paused.url).origin;
  const job = async (target: string) =>
    (await t!.api("POST", "/v1/jobs", { body: { dueAt: T0 + MINUTE, target } })).body.job.id;
  const held = await job(`${paused.url}?n=1`);
  const free = await job(other.url);

  const made = await t.api("POST", "/v1/pauses", { body: { scope: { target: origin } } });
  expect(made.status).toBe(201);
  const id = made.body.pause.id as string;
  expect(made.body.pause).toMatchObject({
    tenant: "acme",
    scope: { target: origin },
    onResume: "fire",
    state: "active",
    pausedAt: new Date(T0).toISOString(),
    resumedAt: null,
  });

  await clock.advance(2 * MINUTE);
  await other.nth(1);
  await t.svc.scheduler.idle();
  expect(paused.requests).toHaveLength(0);
  expect((await t.api("GET", `/v1/jobs/${held}`)).body.job).toMatchObject({
    status: "pending",
    pausedBy: id,
  });
  expect((await t.api("GET", `/v1/jobs/${free}`)).body.job).toMatchObject({
    status: "succeeded",
    pausedBy: null,
  });
  const listed = await t.api("GET", "/v1/jobs?status=pending");
  expect(
    listed.body.jobs.map((j: { id: string; pausedBy: unknown }) => [j.id, j.pausedBy]),
  ).toEqual([[held, id]]);

  const shown = await t.api("GET", `/v1/pauses/${id}`);
  expect(shown.body.pause).toMatchObject({ id, state: "active", heldJobs: 1 });
  expect((await t.api("GET", "/v1/pauses")).body.pauses.map((p: { id: string }) => p.id)).toEqual([
    id,
  ]);
  expect((await t.api("GET", "/v1/stats")).body.paused).toEqual({ jobs: 1, activePauses: 1 });
  const metrics = (await t.api("GET", "/metrics", { key: null })).body as string;
  expect(gauge(metrics, "duetime_paused_jobs")).toBe(1);
  expect(gauge(metrics, "duetime_active_pauses")).toBe(1);

  // another tenant: the pause is not there for it, its stats count none, it cannot resume it
  const theirs = { key: t.umbrella.key };
  expect((await t.api("GET", `/v1/pauses/${id}`, theirs)).status).toBe(404);
  const refused = await t.api("DELETE", `/v1/pauses/${id}`, theirs);
  expect(refused.status).toBe(404);
  expect(refused.body.error).toMatchObject({ code: "not-found", field: "id" });
  expect((await t.api("GET", "/v1/pauses", theirs)).body.pauses).toEqual([]);
  expect((await t.api("GET", "/v1/stats", theirs)).body.paused).toEqual({
    jobs: 0,
    activePauses: 0,
  });
  expect((await t.api("GET", `/v1/pauses/${id}`)).body.pause.state).toBe("active");

  await clock.advance(MINUTE);
  const resumed = await t.api("DELETE", `/v1/pauses/${id}`);
  expect(resumed.status).toBe(200);
  expect(resumed.body.pause).toMatchObject({
    id,
    state: "resuming",
    resumedAt: new Date(T0 + 3 * MINUTE).toISOString(),
  });
  expect(resumed.body.releasing).toEqual({ jobs: 1, onResume: "fire" });
  await clock.advance(1000);
  const delivered = await paused.nth(1);
  expect(delivered.url).toBe("/hook?n=1");
  await t.svc.scheduler.idle();
  expect((await t.api("GET", `/v1/jobs/${held}`)).body.job).toMatchObject({
    status: "succeeded",
    dueAt: new Date(T0 + MINUTE).toISOString(),
    pausedBy: null,
  });
  expect((await t.api("GET", "/v1/pauses")).body.pauses).toEqual([]);
  const done = await t.api("GET", "/v1/pauses?state=resumed");
  expect(done.body.pauses).toMatchObject([{ id, state: "resumed", heldJobs: 0 }]);
  // resuming again answers the pause as it is, giving back nothing
  const again = await t.api("DELETE", `/v1/pauses/${id}`);
  expect(again.status).toBe(200);
  expect(again.body.releasing).toEqual({ jobs: 0, onResume: "fire" });
  expect((await t.api("GET", "/v1/stats")).body.paused).toEqual({ jobs: 0, activePauses: 0 });
});

it("the typed client: a tag pause with onResume shift holds new jobs and moves them by the paused time", async () => {
  const clock = new ManualClock(T0);
  t = await startTestService({ clock });
  const rx = await receiver();
  const client = createClient({ url: t.svc.url, apiKey: t.acme.key });
  const p = await client.createPause({ scope: { tag: "user:42" }, onResume: "shift" });
  expect(p).toMatchObject({ scope: { tag: "user:42" }, onResume: "shift", state: "active" });
  const { job } = await client.createJob({ dueAt: T0 + MINUTE, target: rx.url, tags: ["user:42"] });
  await clock.advance(10 * MINUTE);
  await t.svc.scheduler.idle();
  expect(rx.requests).toHaveLength(0);
  expect(await client.getPause(p.id)).toMatchObject({ heldJobs: 1 });
  expect((await client.listPauses()).map((x) => x.id)).toEqual([p.id]);
  const r = await client.resumePause(p.id);
  expect(r.releasing).toEqual({ jobs: 1, onResume: "shift" });
  await clock.advance(1);
  await t.svc.scheduler.idle();
  // paused at T0, resumed at T0 + 10 min: due T0 + 1 min becomes T0 + 11 min
  expect(await client.getJob(job.id)).toMatchObject({
    status: "pending",
    dueAt: new Date(T0 + 11 * MINUTE).toISOString(),
  });
  expect(await client.listPauses({ state: "resumed" })).toMatchObject([{ id: p.id }]);
  const other = createClient({ url: t.svc.url, apiKey: t.umbrella.key });
  await expect(other.getPause(p.id)).rejects.toMatchObject({ status: 404, field: "id" });
  await clock.advance(MINUTE);
  await rx.nth(1);
});

it("a tenant's open pauses are capped by maxOpenPauses: one more is 429 naming the quota, nothing stored", async () => {
  t = await startTestService({ clock: new ManualClock(T0), scheduler: { maxOpenPauses: 2 } });
  const make = (tag: string, key?: string) =>
    t!.api("POST", "/v1/pauses", {
      body: { scope: { tag } },
      ...(key === undefined ? {} : { key }),
    });
  const first = await make("a");
  expect((await make("b")).status).toBe(201);
  const refused = await make("c");
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBe("60");
  expect(refused.body.error).toMatchObject({
    code: "quota-exceeded",
    field: "tenant",
  });
  expect(refused.body.quota).toBe("openPauses");
  expect(refused.body.error.expected).toContain("at most 2 open");
  expect((await allPauses()).map((p) => (p as { scope: unknown }).scope)).toEqual([
    { tag: "a" },
    { tag: "b" },
  ]);
  // another tenant has its own allowance; a resumed pause frees one
  expect((await make("c", t.umbrella.key)).status).toBe(201);
  await t.api("DELETE", `/v1/pauses/${first.body.pause.id}`);
  await t.svc.scheduler.runPauseWork();
  expect((await make("c")).status).toBe(201);
});

it("refuses bad bodies and queries naming the field, with nothing stored", async () => {
  t = await startTestService();
  const bad = async (body: unknown) => {
    const r = await t!.api("POST", "/v1/pauses", { body });
    expect(r.status, JSON.stringify(body)).toBe(400);
    return r.body.error as { code: string; field: string; expected: string };
  };
  expect((await bad({ scope: { target: "" } })).field).toBe("scope.target");
  expect((await bad({ scope: { tag: "x".repeat(65) } })).field).toBe("scope.tag");
  expect((await bad({ scope: { tenant: false } })).field).toBe("scope.tenant");
  expect((await bad({ scope: { tenant: true, tag: "x" } })).field).toBe("scope");
  expect((await bad({ scope: {} })).field).toBe("scope");
  expect(await bad({ scope: { tenant: true }, onResume: "later" })).toMatchObject({
    field: "onResume",
    expected: "one of fire, expire, shift",
  });
  expect((await bad({ scope: { tenant: true }, tenant: "umbrella" })).field).toBe("tenant");
  expect((await bad([])).field).toBe("pause");
  const broken = await t.api("POST", "/v1/pauses", { raw: "{" });
  expect(broken.status).toBe(400);
  expect(broken.body.error.code).toBeTypeOf("string");
  const big = await t.api("POST", "/v1/pauses", {
    body: { scope: { tag: "x" }, pad: "a".repeat(300 * 1024) },
  });
  expect(big.status).toBe(413);
  const q = await t.api("GET", "/v1/pauses?state=paused");
  expect(q.status).toBe(400);
  expect(q.body.error.field).toBe("state");
  expect((await t.api("GET", "/v1/pauses?limit=many")).body.error.field).toBe("limit");
  // a pause the route finds missing (GET) and one the library refuses (DELETE): one answer
  const shown = await t.api("GET", "/v1/pauses/nope");
  const resumed = await t.api("DELETE", "/v1/pauses/nope");
  expect([shown.status, resumed.status]).toEqual([404, 404]);
  expect(shown.body.error).toMatchObject({
    code: "not-found",
    field: "id",
    expected: "the id of one of your pauses",
    received: '"nope"',
    message: "pause nope not found",
  });
  expect(resumed.body).toEqual(shown.body);
  expect(await allPauses()).toEqual([]);
});

it("a store without pauses answers 501 naming the store, and stats still answer", async () => {
  const dir = tempDir("duetime-nopause-");
  const db = join(dir.path, "jobs.db");
  // A real SQLite store with its pauses capability withdrawn: the shape of a store that has none.
  const sqlite = new SqliteStore({ path: db });
  const store = new Proxy(sqlite, {
    get: (target, prop) => {
      if (prop === "pauses") return undefined;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as Store;
  const scheduler = new Scheduler({ store, clock: new ManualClock(T0), logger: silentLogger });
  const keys = await openKeyStore(db);
  const { key } = await createApiKey(keys, "acme");
  const app = await buildServer({ scheduler, keys, metrics: new ServiceMetrics() });
  try {
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as { error?: { field: string } } };
    };
    for (const [method, path, body] of [
      ["POST", "/v1/pauses", { scope: { tenant: true } }],
      ["GET", "/v1/pauses", undefined],
      ["GET", "/v1/pauses/01ABC", undefined],
      ["DELETE", "/v1/pauses/01ABC", undefined],
    ] as const) {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(501);
      expect(r.body.error).toMatchObject({
        code: "not-implemented",
        field: "store",
        received: "the sqlite store",
      });
    }
    const stats = await call("GET", "/v1/stats");
    expect(stats.status).toBe(200);
    expect((stats.body as { paused?: unknown }).paused).toEqual({ jobs: 0, activePauses: 0 });
  } finally {
    await app.close();
    await scheduler.stop();
    await keys.close();
    await sqlite.close();
    dir.cleanup();
  }
});

it("GET /v1/pauses pages with limit and cursor, in creation order; bad paging is 400 naming the field", async () => {
  t = await startTestService();
  const ids: string[] = [];
  for (const tag of ["a", "b", "c"]) {
    const r = await t.api("POST", "/v1/pauses", { body: { scope: { tag } } });
    ids.push(r.body.pause.id as string);
  }
  const first = await t.api("GET", "/v1/pauses?limit=2");
  expect(first.status).toBe(200);
  expect(first.body.pauses.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 2));
  expect(first.body.nextCursor).toBe(ids[1]);
  const next = await t.api("GET", `/v1/pauses?limit=2&cursor=${first.body.nextCursor}`);
  expect(next.body.pauses.map((p: { id: string }) => p.id)).toEqual([ids[2]]);
  expect(next.body.nextCursor).toBeNull();
  // without limit, one page of up to 100: all three, and no next page
  expect((await t.api("GET", "/v1/pauses")).body).toMatchObject({ nextCursor: null });
  const client = createClient({ url: t.svc.url, apiKey: t.acme.key });
  expect(await client.listPausesPage({ limit: 1, cursor: ids[0]! })).toMatchObject({
    pauses: [{ id: ids[1] }],
    nextCursor: ids[1],
  });
  for (const [query, field] of [
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    [`cursor=${"x".repeat(65)}`, "cursor"],
  ] as const) {
    const r = await t.api("GET", `/v1/pauses?${query}`);
    expect(r.status, query).toBe(400);
    expect(r.body.error.field, query).toBe(field);
  }
});
