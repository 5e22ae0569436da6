import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { InvalidJobError } from "../../src/core/errors.js";
import { verifyWebhook } from "../../src/webhooks/index.js";
import {
  startReceiver,
  startTestService,
  type ReceivedRequest,
  type Receiver,
  type TestService,
} from "./helpers.js";

/**
 * Outcome callbacks over HTTP (issue 13 §5): POST /v1/jobs with `callbacks` on a real server
 * on 127.0.0.1 whose clock is a ManualClock (jobs due now fire; nothing else moves). The job's
 * target and its callback URLs are paths of one real receiver, so each callback arrives as a
 * signed delivery whose signature is checked with the tenant's secret.
 */

const T0 = Date.UTC(2026, 5, 1, 8, 0, 0);

let t: TestService;
let strict: TestService;
let rx: Receiver;
const clock = new ManualClock(T0);

beforeAll(async () => {
  // /fail answers 500 (a dead job with maxAttempts 1); everything else 200
  rx = await startReceiver((req) => ({ status: req.url.endsWith("/fail") ? 500 : 200 }));
  t = await startTestService({ clock });
  strict = await startTestService({ clock: new ManualClock(T0), allowPrivateTargets: false });
});
afterAll(async () => {
  await t.close();
  await strict.close();
  await rx.close();
});

/**
 * The first request the receiver got at `path`. The jobs are due already: the clock moves
 * only so the engine's timers run (its loops sleep on the injected clock), in small steps
 * with a real pause between for the loopback HTTP of each delivery; bounded.
 */
async function arrivalAt(path: string): Promise<ReceivedRequest> {
  for (let round = 0; round < 200; round++) {
    const req = rx.requests.find((r) => r.url.endsWith(path));
    if (req) return req;
    await clock.advance(10);
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`nothing arrived at ${path}`);
}

describe("outcome callbacks", () => {
  it("calls onSuccess with a signed body naming the job, as a callback job of its own", async () => {
    const c = await t.api("POST", "/v1/jobs", {
      body: {
        delayMs: 0,
        target: `${rx.url}/work`,
        key: "standup-42",
        tags: ["user:42"],
        payload: { text: "stand-up" },
        callbacks: { onSuccess: `${rx.url}/done`, onDead: `${rx.url}/dead` },
      },
    });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body.job.callbacks).toEqual({
      onSuccess: `${rx.url}/done`,
      onDead: `${rx.url}/dead`,
    });
    expect(c.body.job.callbackOf).toBeNull();

    const req = await arrivalAt("/done");
    const delivered = verifyWebhook({
      secret: t.acme.secret,
      headers: req.headers,
      body: req.body,
    });
    expect(() =>
      verifyWebhook({ secret: t.umbrella.secret, headers: req.headers, body: req.body }),
    ).toThrow();
    const body = JSON.parse(req.body) as { id: string; tenant: string; payload: unknown };
    expect(body.id).toBe(delivered.id);
    expect(body.tenant).toBe("acme");
    expect(body.payload).toEqual({
      event: "succeeded",
      job: {
        id: c.body.job.id,
        tenant: "acme",
        key: "standup-42",
        tags: ["user:42"],
        target: `${rx.url}/work`,
        status: "succeeded",
        attempts: 1,
        maxAttempts: c.body.job.maxAttempts,
        lastError: null,
        result: expect.objectContaining({ status: 200 }),
        dueAt: c.body.job.dueAt,
        createdAt: c.body.job.createdAt,
        firedAt: expect.any(String),
        finishedAt: expect.any(String),
        nextAttemptAt: null,
        scheduleId: null,
      },
    });

    // the callback is a job of the same tenant that names the job it reports on
    const cb = await t.api("GET", `/v1/jobs/${body.id}`);
    expect(cb.status).toBe(200);
    expect(cb.body.job).toMatchObject({
      target: `${rx.url}/done`,
      callbackOf: c.body.job.id,
      callbacks: null,
    });
    const original = await t.api("GET", `/v1/jobs/${c.body.job.id}`);
    expect(original.body.job).toMatchObject({ status: "succeeded", callbackOf: null });
    // the body's times are the outcome's: the attempt's start, and the callback due at the finish
    const reported = (body.payload as { job: { firedAt: string; finishedAt: string } }).job;
    expect(reported.firedAt).toBe(original.body.job.firedAt);
    expect(reported.finishedAt).toBe(original.body.job.finishedAt);
    expect(cb.body.job.dueAt).toBe(reported.finishedAt);
    expect(rx.requests.filter((r) => r.url.endsWith("/dead"))).toEqual([]);
  });

  it("calls onDead when the last attempt fails, with the error", async () => {
    const c = await t.api("POST", "/v1/jobs", {
      body: {
        delayMs: 0,
        target: `${rx.url}/fail`,
        maxAttempts: 1,
        callbacks: { onSuccess: `${rx.url}/ok-2`, onDead: `${rx.url}/dead-2` },
      },
    });
    expect(c.status).toBe(201);
    const req = await arrivalAt("/dead-2");
    verifyWebhook({ secret: t.acme.secret, headers: req.headers, body: req.body });
    const payload = (JSON.parse(req.body) as { payload: { event: string; job: object } }).payload;
    expect(payload.event).toBe("dead");
    expect(payload.job).toMatchObject({
      id: c.body.job.id,
      status: "dead",
      attempts: 1,
      lastError: expect.stringContaining("HTTP 500"),
    });
  });

  it("refuses a callback to a private address with the target's own message, nothing stored", async () => {
    const before = await strict.svc.scheduler.counts();
    const target = await strict.api("POST", "/v1/jobs", {
      body: { delayMs: 1000, target: "http://127.0.0.1:9/x" },
    });
    const cb = await strict.api("POST", "/v1/jobs", {
      body: {
        delayMs: 1000,
        target: "https://hooks.example.com/x",
        callbacks: { onSuccess: "http://127.0.0.1:9/x" },
      },
    });
    expect(target.status).toBe(400);
    expect(cb.status).toBe(400);
    expect(cb.body.error.field).toBe("callbacks.onSuccess");
    expect(cb.body.error.expected).toBe(target.body.error.expected);
    expect(cb.body.error.expected).toMatch(/public host/);
    expect(await strict.svc.scheduler.counts()).toEqual(before);
  });

  it("names the field of bad callbacks, on a job, in a batch and in the library", async () => {
    const bad = async (callbacks: unknown) =>
      (
        await t.api("POST", "/v1/jobs", {
          body: { delayMs: 1000, target: "https://hooks.example.com/x", callbacks },
        })
      ).body.error;
    expect(await bad("https://hooks.example.com/cb")).toMatchObject({
      field: "callbacks",
      expected: "an object of onSuccess, onFailure and onDead URLs",
    });
    expect((await bad({ onSucces: "https://hooks.example.com/cb" })).field).toBe(
      "callbacks.onSucces",
    );
    expect(await bad({ onDead: "ftp://hooks.example.com/cb" })).toMatchObject({
      field: "callbacks.onDead",
      expected: "an http(s) URL such as https://example.com/hook",
    });
    expect((await bad({ onFailure: 7 })).field).toBe("callbacks.onFailure");

    const before = await t.svc.scheduler.counts();
    const batch = await t.api("POST", "/v1/jobs/batch", {
      body: {
        jobs: [
          { delayMs: 1000, target: "https://hooks.example.com/x" },
          {
            delayMs: 1000,
            target: "https://hooks.example.com/x",
            callbacks: { onFailure: "not a url" },
          },
        ],
      },
    });
    expect(batch.status).toBe(400);
    expect(JSON.stringify(batch.body)).toContain("jobs[1].callbacks.onFailure");
    expect(await t.svc.scheduler.counts()).toEqual(before);

    const refused = await t.svc.scheduler
      .schedule({ delayMs: 1000, target: "send", callbacks: { onSuccess: "mailto:x@y.z" } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidJobError);
    expect((refused as InvalidJobError).field).toBe("callbacks.onSuccess");
  });
});
