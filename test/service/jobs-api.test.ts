import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers.js";

let t: TestService;
beforeEach(async () => {
  t = await startTestService();
});
afterEach(async () => {
  await t.close();
});

const TARGET = "https://hooks.example.com/duetime";

describe("POST /v1/jobs", () => {
  it("creates a job: 201, Location, ETag, the job as stored", async () => {
    const before = Date.now();
    const r = await t.api("POST", "/v1/jobs", {
      body: {
        dueAt: "in 10 minutes",
        target: TARGET,
        payload: { user: 42 },
        headers: { "x-a": "1" },
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.created).toBe(true);
    const job = r.body.job;
    expect(job.id).toMatch(/^[0-9A-Z]{26}$/);
    expect(r.headers.get("location")).toBe(`/v1/jobs/${job.id}`);
    expect(r.headers.get("etag")).toBe('"1"');
    expect(job.status).toBe("pending");
    expect(job.tenant).toBe("acme");
    expect(job.payload).toEqual({ user: 42 });
    expect(job.headers).toEqual({ "x-a": "1" });
    const due = Date.parse(job.dueAt);
    expect(due).toBeGreaterThanOrEqual(before + 600_000);
    expect(due).toBeLessThanOrEqual(Date.now() + 600_000);
  });

  it("reads ISO times with an offset and natural language in an IANA zone", async () => {
    const iso = await t.api("POST", "/v1/jobs", {
      body: { dueAt: "2030-01-02T03:04:05+01:00", target: TARGET },
    });
    expect(iso.body.job.dueAt).toBe("2030-01-02T02:04:05.000Z");
    const nl = await t.api("POST", "/v1/jobs", {
      body: { dueAt: "tomorrow 9am", timeZone: "Asia/Tokyo", target: TARGET },
    });
    expect(nl.status).toBe(201);
    const wall = new Intl.DateTimeFormat("en-US", {
      timeZone: "Asia/Tokyo",
      hour: "numeric",
      minute: "numeric",
      hourCycle: "h23",
    }).format(new Date(nl.body.job.dueAt));
    expect(wall).toBe("09:00");
  });

  it("reads a wall time in timeZone and words in locale, answering the local time and zone", async () => {
    const wall = await t.api("POST", "/v1/jobs", {
      body: { dueAt: "2030-07-01T09:30:00", timeZone: "Europe/Paris", target: TARGET },
    });
    expect(wall.status).toBe(201);
    expect(wall.body).toMatchObject({
      dueAtLocal: "2030-07-01T09:30:00.000+02:00",
      timeZone: "Europe/Paris",
      job: { dueAt: "2030-07-01T07:30:00.000Z" },
    });
    const french = await t.api("POST", "/v1/jobs", {
      body: { dueAt: "demain à 9h", timeZone: "Europe/Paris", locale: "fr", target: TARGET },
    });
    expect(french.status).toBe(201);
    expect(french.body.dueAtLocal).toMatch(/T09:00:00\.000\+0[12]:00$/);
    const moved = await t.api("POST", `/v1/jobs/${french.body.job.id}/reschedule`, {
      body: { dueAt: "morgen um 10 Uhr", timeZone: "Europe/Berlin", locale: "de" },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ outcome: "rescheduled", timeZone: "Europe/Berlin" });
    expect(moved.body.dueAtLocal).toMatch(/T10:00:00\.000\+0[12]:00$/);
    const bad = await t.api("POST", "/v1/jobs", {
      body: { dueAt: "demain à 9h", locale: "xx", target: TARGET },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "invalid", field: "locale", received: '"xx"' });
    // a zone is checked even beside delayMs, where it reads nothing
    const zone = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 1000, timeZone: [null], target: TARGET },
    });
    expect(zone.status).toBe(400);
    expect(zone.body.error).toMatchObject({ field: "timeZone" });
  });

  it("an idempotency key returns the live job with 200 and stores nothing new", async () => {
    const body = { dueAt: "in 1 hour", target: TARGET, key: "order-7" };
    const first = await t.api("POST", "/v1/jobs", { body });
    const again = await t.api("POST", "/v1/jobs", { body: { ...body, dueAt: "in 2 hours" } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.created).toBe(false);
    expect(again.body.job.id).toBe(first.body.job.id);
    expect(again.body.job.dueAt).toBe(first.body.job.dueAt);
    const stats = await t.api("GET", "/v1/stats");
    expect(stats.body.counts.pending).toBe(1);
  });

  it("keeps maxAttempts and the misfire tolerance", async () => {
    const r = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 60_000, target: TARGET, maxAttempts: 7, expireAfterMs: 5000 },
    });
    expect(r.body.job.maxAttempts).toBe(7);
    expect(r.body.job.expireAfterMs).toBe(5000);
  });
});

describe("POST /v1/jobs/batch", () => {
  it("stores up to 1000 jobs in one request", async () => {
    const jobs = Array.from({ length: 1000 }, (_, i) => ({
      delayMs: 3_600_000 + i,
      target: TARGET,
      payload: { i },
    }));
    const r = await t.api("POST", "/v1/jobs/batch", { body: { jobs } });
    expect(r.status).toBe(201);
    expect(r.body.jobs).toHaveLength(1000);
    expect(r.body.jobs[999].job.payload).toEqual({ i: 999 });
    expect((await t.api("GET", "/v1/stats")).body.counts.pending).toBe(1000);
  });

  it("is all or nothing, listing every bad item", async () => {
    const r = await t.api("POST", "/v1/jobs/batch", {
      body: {
        jobs: [
          { delayMs: 1000, target: TARGET },
          { delayMs: 1000, target: "ftp://nope" },
          { delayMs: 1000, target: TARGET },
          { dueAt: "someday maybe", target: TARGET },
        ],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: { index: number; field: string }) => [e.index, e.field])).toEqual([
      [1, "jobs[1].target"],
      [3, "jobs[3].dueAt"],
    ]);
    expect(r.body.error.field).toBe("jobs[1].target");
    // the top-level error is the first item's, described once as in `errors`
    expect(r.body.errors[0].received).toBe('"ftp://nope"');
    expect(r.body.error.received).toBe(r.body.errors[0].received);
    expect((await t.api("GET", "/v1/stats")).body.counts.pending).toBe(0);
  });

  it("refuses more than 1000 jobs and an empty list", async () => {
    const many = Array.from({ length: 1001 }, () => ({ delayMs: 1000, target: TARGET }));
    const r = await t.api("POST", "/v1/jobs/batch", { body: { jobs: many } });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("jobs");
    expect((await t.api("POST", "/v1/jobs/batch", { body: { jobs: [] } })).status).toBe(400);
  });

  it("answers 200 when every item matched a live job by key", async () => {
    const jobs = [{ delayMs: 5000, target: TARGET, key: "k1" }];
    expect((await t.api("POST", "/v1/jobs/batch", { body: { jobs } })).status).toBe(201);
    const again = await t.api("POST", "/v1/jobs/batch", { body: { jobs } });
    expect(again.status).toBe(200);
    expect(again.body.jobs[0].created).toBe(false);
  });
});

describe("GET /v1/jobs and /v1/jobs/:id", () => {
  it("gets one job with its ETag; a missing one is 404", async () => {
    const c = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target: TARGET } });
    const g = await t.api("GET", `/v1/jobs/${c.body.job.id}`);
    expect(g.status).toBe(200);
    expect(g.body.job).toEqual(c.body.job);
    expect(g.headers.get("etag")).toBe('"1"');
    const missing = await t.api("GET", "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not-found");
  });

  it("lists in due order with status and due-range filters and cursor paging", async () => {
    const now = Date.now();
    const jobs = Array.from({ length: 25 }, (_, i) => ({
      dueAt: new Date(now + 3_600_000 + (25 - i) * 60_000).toISOString(),
      target: TARGET,
      payload: { i },
    }));
    const created = await t.api("POST", "/v1/jobs/batch", { body: { jobs } });
    const cancelId = created.body.jobs[0].job.id;
    expect((await t.api("POST", `/v1/jobs/${cancelId}/cancel`)).status).toBe(200);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/v1/jobs?status=pending&limit=10${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await t.api("GET", q);
      expect(page.status).toBe(200);
      for (const j of page.body.jobs) seen.push(j.dueAt);
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    expect(seen).toHaveLength(24);
    expect([...seen].sort()).toEqual(seen);

    const from = new Date(now + 3_600_000 + 5 * 60_000).toISOString();
    const to = new Date(now + 3_600_000 + 10 * 60_000).toISOString();
    const ranged = await t.api(
      "GET",
      `/v1/jobs?dueFrom=${encodeURIComponent(from)}&dueTo=${encodeURIComponent(to)}`,
    );
    expect(ranged.body.jobs).toHaveLength(5);
    const both = await t.api("GET", "/v1/jobs?status=pending,cancelled&limit=100");
    expect(both.body.jobs).toHaveLength(25);
    const cancelled = await t.api("GET", "/v1/jobs?status=cancelled");
    expect(cancelled.body.jobs.map((j: { id: string }) => j.id)).toEqual([cancelId]);
  });
});

describe("reschedule and cancel", () => {
  it("reschedules with If-Match; a stale version is 412", async () => {
    const c = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target: TARGET } });
    const id = c.body.job.id;
    const r1 = await t.api("POST", `/v1/jobs/${id}/reschedule`, {
      body: { dueAt: "2031-05-01T10:00:00Z" },
      headers: { "if-match": '"1"' },
    });
    expect(r1.status).toBe(200);
    expect(r1.body.outcome).toBe("rescheduled");
    expect(r1.body.job.dueAt).toBe("2031-05-01T10:00:00.000Z");
    expect(r1.headers.get("etag")).toBe('"2"');
    const stale = await t.api("POST", `/v1/jobs/${id}/reschedule`, {
      body: { delayMs: 1000 },
      headers: { "if-match": '"1"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe("version-conflict");
    expect(stale.body.job.version).toBe(2);
    const bad = await t.api("POST", `/v1/jobs/${id}/reschedule`, {
      body: { delayMs: 1000 },
      headers: { "if-match": "yesterday" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("if-match");
    const unconditional = await t.api("POST", `/v1/jobs/${id}/reschedule`, {
      body: { dueAt: "in 3 hours" },
    });
    expect(unconditional.status).toBe(200);
  });

  it("cancel: 200 cancelled, then 409 too-late, and 404 for a missing job", async () => {
    const c = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target: TARGET } });
    const id = c.body.job.id;
    const first = await t.api("POST", `/v1/jobs/${id}/cancel`);
    expect(first.status).toBe(200);
    expect(first.body.outcome).toBe("cancelled");
    expect(first.body.job.status).toBe("cancelled");
    const again = await t.api("POST", `/v1/jobs/${id}/cancel`, {
      raw: "",
      headers: { "content-type": "application/json" },
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("too-late");
    expect(again.body.job.status).toBe("cancelled");
    const resched = await t.api("POST", `/v1/jobs/${id}/reschedule`, { body: { delayMs: 5 } });
    expect(resched.status).toBe(409);
    const missing = await t.api("POST", "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel");
    expect(missing.status).toBe(404);
  });
});

describe("GET /v1/stats, health and metrics", () => {
  it("reports counts by state, pending per bucket, lateness and outcomes per minute", async () => {
    await t.api("POST", "/v1/jobs/batch", {
      body: {
        jobs: [
          { delayMs: 3_600_000, target: TARGET },
          { delayMs: 7_200_000, target: TARGET },
        ],
      },
    });
    const s = await t.api("GET", "/v1/stats?buckets=4");
    expect(s.status).toBe(200);
    expect(s.body.counts).toMatchObject({ pending: 2, succeeded: 0 });
    expect(s.body.bucketWidthMs).toBe(3_600_000);
    expect(s.body.buckets.reduce((n: number, b: { pending: number }) => n + b.pending, 0)).toBe(2);
    expect(s.body.lateness).toMatchObject({ windowMinutes: 60, count: 0 });
    expect(s.body.perMinute).toHaveLength(60);
    expect((await t.api("GET", "/v1/stats?buckets=zero")).status).toBe(400);
  });

  it("/healthz, /readyz and /metrics answer without a key", async () => {
    expect((await t.api("GET", "/healthz", { key: null })).status).toBe(200);
    const ready = await t.api("GET", "/readyz", { key: null });
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe("ready");
    await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target: TARGET } });
    const m = await t.api("GET", "/metrics", { key: null });
    expect(m.status).toBe(200);
    expect(m.body).toContain('duetime_jobs{status="pending"} 1');
    expect(m.body).toContain("duetime_fire_lateness_seconds_bucket");
    expect(m.body).toContain("duetime_claim_batch_size_bucket");
    expect(m.body).toContain('duetime_job_outcomes_total{outcome="succeeded"} 0');
    expect(m.body).toContain("duetime_backlog_overdue 0");
    expect(m.body).toMatch(
      /duetime_http_requests_total\{method="POST",route="\/v1\/jobs",status="201"\} 1/,
    );
  });
});

describe("the service's time zone", () => {
  it("reads a request's wall time in the scheduler's timeZone when the request names none", async () => {
    const tokyo = await startTestService({ scheduler: { timeZone: "Asia/Tokyo" } });
    try {
      const r = await tokyo.api("POST", "/v1/jobs", {
        body: { dueAt: "2030-01-02T09:00:00", target: TARGET },
      });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        timeZone: "Asia/Tokyo",
        dueAtLocal: "2030-01-02T09:00:00.000+09:00",
        job: { dueAt: "2030-01-02T00:00:00.000Z" },
      });
    } finally {
      await tokyo.close();
    }
  });
});
