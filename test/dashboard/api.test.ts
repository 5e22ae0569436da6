import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobView } from "../../src/api/job-view.js";
import { dashboardPlugin } from "../../src/dashboard/plugin.js";
import { SCHEMAS } from "../../src/service/openapi-schemas.js";
import { makeHarness } from "../support/harness.js";
import { HOUR, startDashboard, type Dashboard } from "./helpers.js";

/** The dashboard's data endpoints over real HTTP on loopback. */
describe("dashboard data endpoints", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => {
    await d.stop();
  });

  it("answers 401 without a key or with an unknown one, on every data route", async () => {
    const id = d.seeded.invoice.id;
    const routes: [string, string][] = [
      ["GET", "/v1/dashboard/future"],
      ["GET", "/v1/dashboard/now"],
      ["GET", "/v1/dashboard/jobs"],
      ["GET", `/v1/dashboard/jobs/${id}`],
      ["POST", `/v1/dashboard/jobs/${id}/cancel`],
      ["POST", `/v1/dashboard/jobs/${id}/reschedule`],
      ["POST", `/v1/dashboard/jobs/${id}/retry`],
      ["GET", "/v1/events"],
      ["GET", "/v1/events?key=nope"],
    ];
    for (const [method, path] of routes) {
      for (const key of [null, "nope"]) {
        const r = await d.api(path, { method, key, ...(method === "POST" ? { body: {} } : {}) });
        expect(r.status, `${method} ${path} key=${key}`).toBe(401);
        expect(r.body.error.code).toBe("unauthorized");
        expect(r.headers.get("www-authenticate")).toContain("Bearer");
      }
    }
    expect((await d.api(`/v1/dashboard/jobs/${id}`)).body.job.status).toBe("pending");
  });

  it("serves the page without a key, and 404 for files outside the assets", async () => {
    const page = await d.api("/", { key: null });
    expect([200, 503]).toContain(page.status); // 503 when the front end is not built
    expect((await d.api("/assets/..%2Fpackage.json", { key: null })).status).toBe(404);
    expect((await d.api("/assets/nope.js", { key: null })).status).toBe(404);
  });

  it("shows the future by bucket from the counters, per tenant", async () => {
    const r = await d.api("/v1/dashboard/future?zoom=1d");
    expect(r.status).toBe(200);
    expect(r.body.binMs).toBe(HOUR);
    const byOffset = Object.fromEntries(
      r.body.bins
        .filter((b: { pending: number }) => b.pending > 0)
        .map((b: { start: number; pending: number }) => [(b.start - d.bucket0) / HOUR, b.pending]),
    );
    expect(byOffset).toEqual({ 1: 3, 3: 5, 5: 2 });
    expect(r.body.total).toBe(10);
    expect(r.body.overdue).toBe(1);

    const week = await d.api("/v1/dashboard/future?zoom=7d");
    expect(week.body.total).toBe(17);
    const other = await d.api("/v1/dashboard/future?zoom=1d", { key: "key-globex" });
    expect(other.body.total).toBe(4);
    expect(other.body.overdue).toBe(0);

    // An explicit range is re-binned finer (down to the bucket width).
    const range = await d.api(
      `/v1/dashboard/future?from=${d.bucket0 + 3 * HOUR}&to=${d.bucket0 + 4 * HOUR}`,
    );
    expect(range.body.bins).toEqual([{ start: d.bucket0 + 3 * HOUR, pending: 5 }]);
  });

  it("rejects bad future parameters naming the field", async () => {
    const r = await d.api("/v1/dashboard/future?zoom=2w");
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid", field: "zoom" });
    const back = await d.api(`/v1/dashboard/future?from=${d.bucket0}&to=${d.bucket0 - 1}`);
    expect(back.body.error.field).toBe("to");
    expect((await d.api("/v1/dashboard/future?bins=0")).body.error.field).toBe("bins");
  });

  it("summarises now from counters and the activity of this process", async () => {
    const r = await d.api("/v1/dashboard/now?minutes=5");
    expect(r.status).toBe(200);
    expect(r.body.backlog).toBe(18); // 17 future + 1 overdue
    expect(r.body.counts).toMatchObject({ pending: 18, succeeded: 3, dead: 1, cancelled: 1 });
    expect(r.body.inFlight).toBe(0);
    expect(r.body.oldestOverdue).toMatchObject({ id: d.seeded.overdue.id });
    expect(r.body.oldestOverdue.lateByMs).toBeGreaterThan(2 * HOUR);
    expect(r.body.deadLastDay).toMatchObject({ count: 1 });
    expect(r.body.deadLastDay.since).toBeLessThanOrEqual(d.clock.now());
    expect(r.body.minutes).toHaveLength(5);
    type Minute = { succeeded: number; fired: number };
    const sum = (f: (m: Minute) => number) =>
      r.body.minutes.reduce((n: number, m: Minute) => n + f(m), 0);
    expect(sum((m) => m.succeeded)).toBe(3);
    expect(sum((m) => m.fired)).toBe(3); // the deprecated alias, kept for one release
    expect(r.body.lateness.count).toBe(3);
    const globex = await d.api("/v1/dashboard/now", { key: "key-globex" });
    expect(globex.body).toMatchObject({ backlog: 4, oldestOverdue: null });
    expect(globex.body.deadLastDay.count).toBe(0);
  });

  it("searches by id and by key, within the tenant only", async () => {
    const { invoice, globex } = d.seeded;
    const byId = await d.api(`/v1/dashboard/jobs?q=${invoice.id}`);
    expect(byId.body).toMatchObject({ match: "id", jobs: [{ id: invoice.id, key: "invoice-42" }] });
    const byKey = await d.api("/v1/dashboard/jobs?q=invoice-42");
    expect(byKey.body).toMatchObject({ match: "key", jobs: [{ id: invoice.id }] });
    const foreign = await d.api(`/v1/dashboard/jobs?q=${globex.id}`);
    expect(foreign.body).toEqual({ match: null, jobs: [], nextCursor: null });
    const keyElsewhere = await d.api("/v1/dashboard/jobs?q=invoice-42", { key: "key-globex" });
    expect(keyElsewhere.body.jobs).toEqual([]);
  });

  it("lists by state and due range, paged with the cursor", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { body: { jobs: { id: string; status: string }[]; nextCursor: string | null } } =
        await d.api(
          `/v1/dashboard/jobs?status=pending&limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        );
      for (const j of r.body.jobs) {
        expect(j.status).toBe("pending");
        seen.push(j.id);
      }
      cursor = r.body.nextCursor;
    } while (cursor !== null);
    expect(seen).toHaveLength(18);
    expect(new Set(seen).size).toBe(18);
    const ranged = await d.api(
      `/v1/dashboard/jobs?dueFrom=${new Date(d.bucket0 + 3 * HOUR).toISOString()}&dueTo=${d.bucket0 + 4 * HOUR}`,
    );
    expect(ranged.body.jobs).toHaveLength(5);
    const dead = await d.api("/v1/dashboard/jobs?status=dead");
    expect(dead.body.jobs.map((j: { id: string }) => j.id)).toEqual([d.seeded.dead.id]);
    const bad = await d.api("/v1/dashboard/jobs?status=sleeping");
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("status");
  });

  it("shows one job with its ETag; another tenant's job is 404 like a missing one", async () => {
    const { invoice, globex } = d.seeded;
    const r = await d.api(`/v1/dashboard/jobs/${invoice.id}`);
    expect(r.status).toBe(200);
    expect(r.body.job).toMatchObject({
      id: invoice.id,
      payload: { invoice: 42, to: "ada@example.com" },
      target: "noop",
      attempts: 0,
    });
    expect(r.headers.get("etag")).toBe(`"${r.body.job.version}"`);
    const dead = await d.api(`/v1/dashboard/jobs/${d.seeded.dead.id}`);
    expect(dead.body.job.lastError).toBeTruthy();
    const foreign = await d.api(`/v1/dashboard/jobs/${globex.id}`);
    const missing = await d.api("/v1/dashboard/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV");
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.body.error.code).toBe(missing.body.error.code);
  });

  it("shows jobs in the one JSON view of a job: the API's Job fields, ISO times", async () => {
    // Before, the table had a shape of its own and the detail and action answers the stored
    // row (epoch ms, bucket, shard, lease owner, fence).
    const fields = Object.keys((SCHEMAS.Job as { properties: object }).properties).sort();
    const { invoice } = d.seeded;
    const stored = (await d.scheduler.get(invoice.id))!;
    const detail = await d.api(`/v1/dashboard/jobs/${invoice.id}`);
    expect(Object.keys(detail.body.job).sort()).toEqual(fields);
    expect(detail.body.job).toEqual(JSON.parse(JSON.stringify(jobView(stored))));
    expect(detail.body.job.dueAt).toBe(new Date(stored.dueAt).toISOString());
    const search = await d.api(`/v1/dashboard/jobs?q=${encodeURIComponent(invoice.key!)}`);
    expect(search.body.match).toBe("key");
    expect(search.body.jobs).toEqual([detail.body.job]);
    const page = await d.api("/v1/dashboard/jobs?limit=3");
    for (const j of page.body.jobs) expect(Object.keys(j).sort()).toEqual(fields);
    const { job } = await d.scheduler.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 9 * HOUR,
      target: "noop",
    });
    const cancelled = await d.api(`/v1/dashboard/jobs/${job.id}/cancel`, { method: "POST" });
    expect(Object.keys(cancelled.body.job).sort()).toEqual(fields);
    const late = await d.api(`/v1/dashboard/jobs/${job.id}/cancel`, { method: "POST" });
    expect(Object.keys(late.body.job).sort()).toEqual(fields);
    expect(late.body.job.finishedAt).toBe(cancelled.body.job.finishedAt);
  });

  it("answers a too-late or stale change as the REST API does, with the same words", async () => {
    const { job } = await d.scheduler.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 9 * HOUR,
      target: "noop",
    });
    const path = `/v1/dashboard/jobs/${job.id}`;
    await d.api(`${path}/reschedule`, { method: "POST", body: { dueAt: "in 3 hours" } });
    const stale = await d.api(`${path}/reschedule`, {
      method: "POST",
      body: { dueAt: "in 4 hours" },
      headers: { "if-match": `"${job.version}"` },
    });
    expect(stale.status).toBe(412);
    expect(stale.headers.get("etag")).toBe(`"${job.version + 1}"`);
    expect(stale.body.error).toEqual({
      code: "version-conflict",
      field: "if-match",
      expected: `the job's current version (${job.version + 1})`,
      received: `"${job.version}"`,
      message: `job ${job.id} changed: it is at version ${job.version + 1}`,
    });
    const badTag = await d.api(`${path}/reschedule`, {
      method: "POST",
      body: { dueAt: "in 4 hours" },
      headers: { "if-match": "v3" },
    });
    expect(badTag.status).toBe(400);
    expect(badTag.body.error.expected).toBe('the job\'s ETag (e.g. "3")');
    await d.api(`${path}/cancel`, { method: "POST" });
    const late = await d.api(`${path}/reschedule`, {
      method: "POST",
      body: { dueAt: "in 1 hour" },
    });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toBe(`too late: job ${job.id} is already cancelled`);
  });

  it("cancels with definite outcomes: cancelled, too-late 409, not-found 404", async () => {
    const { job } = await d.scheduler.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 9 * HOUR,
      target: "noop",
    });
    const foreign = await d.api(`/v1/dashboard/jobs/${job.id}/cancel`, {
      method: "POST",
      body: {},
      key: "key-globex",
    });
    expect(foreign.status).toBe(404);
    const ok = await d.api(`/v1/dashboard/jobs/${job.id}/cancel`, { method: "POST", body: {} });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ outcome: "cancelled", job: { status: "cancelled" } });
    const again = await d.api(`/v1/dashboard/jobs/${job.id}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      outcome: "too-late",
      error: { code: "too-late" },
      job: { status: "cancelled" },
    });
  });

  it("snoozes with If-Match: rescheduled, version-conflict 412, bad time 400", async () => {
    const { job } = await d.scheduler.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 9 * HOUR,
      target: "noop",
    });
    const path = `/v1/dashboard/jobs/${job.id}/reschedule`;
    const ok = await d.api(path, {
      method: "POST",
      body: { dueAt: "in 2 hours" },
      headers: { "if-match": `"${job.version}"` },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.job.dueAt).toBe(new Date(d.clock.now() + 2 * HOUR).toISOString());
    const stale = await d.api(path, {
      method: "POST",
      body: { dueAt: d.bucket0 + 10 * HOUR },
      headers: { "if-match": `"${job.version}"` },
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({
      outcome: "version-conflict",
      job: { version: job.version + 1 },
    });
    const bad = await d.api(path, { method: "POST", body: { dueAt: "someday" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("dueAt");
    const unknown = await d.api(path, { method: "POST", body: { dueAt: "in 1 hour", when: 1 } });
    expect(unknown.body.error.field).toBe("when");
    const foreign = await d.api(path, {
      method: "POST",
      body: { dueAt: "in 1 hour" },
      key: "key-globex",
    });
    expect(foreign.status).toBe(404);
  });

  it("retries a dead job; a pending one is too-late", async () => {
    const pending = await d.api(`/v1/dashboard/jobs/${d.seeded.invoice.id}/retry`, {
      method: "POST",
      body: {},
    });
    expect(pending.status).toBe(409);
    const foreign = await d.api(`/v1/dashboard/jobs/${d.seeded.dead.id}/retry`, {
      method: "POST",
      body: {},
      key: "key-globex",
    });
    expect(foreign.status).toBe(404);
    const ok = await d.api(`/v1/dashboard/jobs/${d.seeded.dead.id}/retry`, {
      method: "POST",
      body: {},
    });
    expect(ok.status).toBe(200);
    expect(ok.body.job).toMatchObject({ status: "pending", attempts: 0 });
  });
});

/** What a host's `authenticate` may answer instead of a tenant (the service's rate limit). */
describe("authenticate refusals", () => {
  it("sends the host's refusal as is, and never lets a non-error one through", async () => {
    const h = makeHarness();
    const app = Fastify({ logger: false });
    await app.register(dashboardPlugin, {
      scheduler: h.scheduler,
      authenticate: async (req) => {
        const header = req.headers.authorization;
        if (header === "Bearer slow") {
          return {
            status: 429,
            body: { error: { code: "rate-limited" } },
            headers: { "retry-after": "7" },
          };
        }
        if (header === "Bearer odd") return { status: 200, body: {} };
        return header === "Bearer ok" ? "acme" : null;
      },
    });
    try {
      const limited = await app.inject({ url: "/v1/events?key=slow" });
      expect(limited.statusCode).toBe(429);
      expect(limited.headers["retry-after"]).toBe("7");
      expect(limited.json()).toEqual({ error: { code: "rate-limited" } });
      const odd = await app.inject({
        url: "/v1/dashboard/now",
        headers: { authorization: "Bearer odd" },
      });
      expect(odd.statusCode).toBe(500);
      expect(odd.json().error.code).toBe("internal");
      const ok = await app.inject({
        url: "/v1/dashboard/now",
        headers: { authorization: "Bearer ok" },
      });
      expect(ok.statusCode).toBe(200);
      expect((await app.inject({ url: "/v1/dashboard/now" })).statusCode).toBe(401);
    } finally {
      await app.close();
      await h.close();
    }
  });
});
