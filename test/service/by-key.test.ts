import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startReceiver, startTestService, type TestService } from "./helpers.js";

/**
 * Issue 13 §1 over HTTP: keyMode on POST /v1/jobs and /v1/jobs/batch, and
 * /v1/jobs/by-key/{key} (GET, /cancel, /reschedule) answering as the by-id routes do,
 * within the key's tenant.
 */

let t: TestService;
beforeEach(async () => {
  t = await startTestService();
});
afterEach(async () => {
  await t.close();
});

const TARGET = "https://hooks.example.com/duetime";

describe("keyMode over HTTP", () => {
  it("replaces the pending job: 200 with outcome replaced; keep answers existing", async () => {
    const c = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 60_000, target: TARGET, key: "standup/42", payload: 1 },
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ created: true, outcome: "created" });
    const kept = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 90_000, target: TARGET, key: "standup/42", payload: 2 },
    });
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ created: false, outcome: "existing", job: { payload: 1 } });
    const r = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 90_000, target: TARGET, key: "standup/42", payload: 3, keyMode: "replace" },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toBe('"2"');
    expect(r.body).toMatchObject({
      created: false,
      outcome: "replaced",
      job: { id: c.body.job.id, payload: 3, version: 2 },
    });
    const batch = await t.api("POST", "/v1/jobs/batch", {
      body: {
        jobs: [
          { delayMs: 5_000, target: TARGET, key: "standup/42", keyMode: "debounce", maxWaitMs: 1 },
          { delayMs: 5_000, target: TARGET, key: "other" },
        ],
      },
    });
    expect(batch.status).toBe(201);
    expect(batch.body.jobs.map((j: { outcome: string }) => j.outcome)).toEqual([
      "replaced",
      "created",
    ]);
  });

  it("refuses a bad keyMode naming the field, and stores nothing", async () => {
    const r = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 1000, target: TARGET, key: "k", keyMode: "upsert" },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      field: "keyMode",
      expected: "one of keep, replace, debounce",
      received: '"upsert"',
    });
    expect((await t.api("GET", "/v1/jobs")).body.jobs).toEqual([]);
  });

  it("answers 409 too-late when the key's job is firing, and changes nothing", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const rx = await startReceiver(async () => {
      await held;
      return { status: 200 };
    });
    try {
      const c = await t.api("POST", "/v1/jobs", {
        body: { delayMs: 0, target: rx.url, key: "k", payload: "first" },
      });
      await rx.nth(1);
      const r = await t.api("POST", "/v1/jobs", {
        body: { delayMs: 60_000, target: rx.url, key: "k", payload: "second", keyMode: "replace" },
      });
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({
        error: { code: "too-late", field: "status", received: '"claimed"' },
        outcome: "too-late",
        job: { id: c.body.job.id, status: "claimed", payload: "first" },
      });
      const byKey = await t.api("POST", "/v1/jobs/by-key/k/cancel");
      expect(byKey.status).toBe(409);
      expect(byKey.body).toMatchObject({ outcome: "too-late", job: { id: c.body.job.id } });
    } finally {
      release();
      await rx.close();
    }
  });
});

describe("/v1/jobs/by-key/{key}", () => {
  it("reaches a key of the longest length (256 characters) and answers 414 only past it", async () => {
    // The router's path-parameter bound was 200: a valid 256-character key answered 414.
    const key = `user:42/${"k".repeat(248)}`;
    const path = `/v1/jobs/by-key/${encodeURIComponent(key)}`;
    const c = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target: TARGET, key } });
    expect(c.status).toBe(201);
    const got = await t.api("GET", path);
    expect(got.status).toBe(200);
    expect(got.body.job).toMatchObject({ id: c.body.job.id, key });
    const moved = await t.api("POST", `${path}/reschedule`, { body: { delayMs: 120_000 } });
    expect(moved.status).toBe(200);
    expect(moved.body.outcome).toBe("rescheduled");
    const cancelled = await t.api("POST", `${path}/cancel`);
    expect(cancelled.body.outcome).toBe("cancelled");
    const past = await t.api("GET", `/v1/jobs/by-key/${"k".repeat(257)}`);
    expect(past.status).toBe(414);
    expect(past.body.error).toMatchObject({ field: "path" });
  });

  it("gets, reschedules with If-Match and cancels the key's live job", async () => {
    const key = "user:42/stand up";
    const path = `/v1/jobs/by-key/${encodeURIComponent(key)}`;
    const c = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target: TARGET, key } });
    const id = c.body.job.id;
    const got = await t.api("GET", path);
    expect(got.status).toBe(200);
    expect(got.headers.get("etag")).toBe('"1"');
    expect(got.body.job).toMatchObject({ id, key });
    // another tenant does not see it
    const other = await t.api("GET", path, { key: t.umbrella.key });
    expect(other.status).toBe(404);
    expect(other.body.error).toMatchObject({ code: "not-found", field: "key" });
    expect((await t.api("POST", `${path}/cancel`, { key: t.umbrella.key })).status).toBe(404);

    const stale = await t.api("POST", `${path}/reschedule`, {
      body: { delayMs: 120_000 },
      headers: { "if-match": '"7"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatchObject({ code: "version-conflict", field: "if-match" });
    const moved = await t.api("POST", `${path}/reschedule`, {
      body: { delayMs: 120_000 },
      headers: { "if-match": '"1"' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ outcome: "rescheduled", job: { id, version: 2 } });
    const bad = await t.api("POST", `${path}/reschedule`, { body: { delayMs: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("delayMs");

    const cancelled = await t.api("POST", `${path}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      outcome: "cancelled",
      job: { id, status: "cancelled" },
    });
    // the key is free now
    const gone = await t.api("POST", `${path}/cancel`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toBe(`no live job has key ${JSON.stringify(key)}`);
    expect((await t.api("GET", `/v1/jobs/${id}`)).body.job.status).toBe("cancelled");
  });
});
