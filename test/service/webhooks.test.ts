import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { Job } from "../../src/core/job.js";
import { PermanentJobError, RetryLaterError } from "../../src/engine/handler-errors.js";
import { isPrivateAddress } from "../../src/core/address-ranges.js";
import { parseRetryAfter } from "../../src/core/retry-after.js";
import { createWebhookDelivery } from "../../src/service/webhook/deliver.js";
import { verifyWebhook } from "../../src/webhooks/index.js";
import { tempDir } from "../support/temp-dir.js";
import {
  startReceiver,
  startTestService,
  waitForJob,
  type Receiver,
  type TestService,
} from "./helpers.js";

type Verify = (secret: string, headers: object, rawBody: string, toleranceSec?: number) => boolean;

// The verification snippet of docs/webhooks.md, run as a receiver would run it.
let verifyFromDocs: Verify;
const snippetDir = tempDir("duetime-webhook-doc-");
beforeAll(async () => {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/webhooks.md"), "utf8");
  const block = /```js\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/webhooks.md has no js block");
  const file = join(snippetDir.path, "verify.mjs");
  writeFileSync(file, block[1]!);
  verifyFromDocs = ((await import(pathToFileURL(file).href)) as { verifyDuetimeWebhook: Verify })
    .verifyDuetimeWebhook;
});
afterAll(() => snippetDir.cleanup());

let t: TestService | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await t?.close();
  await rx?.close();
  t = undefined;
  rx = undefined;
});

/** Runs docs/webhooks.md's python block on each case (the body as UTF-8 bytes). */
async function runPythonSnippet(
  cases: { secret: string; headers: object; body: string }[],
): Promise<boolean[]> {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/webhooks.md"), "utf8");
  const block = /```python\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/webhooks.md has no python block");
  const driver = [
    block[1]!,
    "import json, sys",
    "cases = json.load(sys.stdin)",
    'print(json.dumps([verify_duetime_webhook(c["secret"], c["headers"], c["body"].encode()) for c in cases]))',
  ].join("\n");
  const file = join(snippetDir.path, "verify.py");
  writeFileSync(file, driver);
  const child = execFile("python3", [file], { timeout: 30_000 });
  child.stdin!.end(JSON.stringify(cases));
  const stdout = await new Promise<string>((res, rej) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", rej);
    child.on("exit", (code) => (code === 0 ? res(out) : rej(new Error(`python3 exited ${code}`))));
  });
  return JSON.parse(stdout) as boolean[];
}

describe("webhook delivery", () => {
  it("POSTs the signed job JSON; the docs' snippet verifies it and rejects tampering", async () => {
    t = await startTestService();
    rx = await startReceiver();
    const c = await t.api("POST", "/v1/jobs", {
      body: {
        delayMs: 0,
        target: rx.url,
        payload: { user: 42 },
        key: "k-1",
        headers: { "x-team": "blue" },
      },
    });
    expect(c.status).toBe(201);
    const req = await rx.nth(1);
    expect(req.method).toBe("POST");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers["duetime-job-id"]).toBe(c.body.job.id);
    expect(req.headers["duetime-attempt"]).toBe("1");
    expect(req.headers["x-team"]).toBe("blue");
    expect(JSON.parse(req.body)).toEqual({
      id: c.body.job.id,
      key: "k-1",
      tenant: "acme",
      dueAt: c.body.job.dueAt,
      attempt: 1,
      payload: { user: 42 },
    });
    expect(verifyFromDocs(t.acme.secret, req.headers, req.body)).toBe(true);
    expect(verifyFromDocs(t.umbrella.secret, req.headers, req.body)).toBe(false);
    expect(verifyFromDocs(t.acme.secret, req.headers, req.body.replace("42", "43"))).toBe(false);
    const replayed = {
      ...req.headers,
      "duetime-timestamp": String(Number(req.headers["duetime-timestamp"]) - 3600),
    };
    expect(verifyFromDocs(t.acme.secret, replayed, req.body)).toBe(false);
    // The server's own verifier agrees with the documented one.
    expect(verifyWebhook({ secret: t.acme.secret, headers: req.headers, body: req.body }).id).toBe(
      c.body.job.id,
    );
    const job = await waitForJob(t, c.body.job.id, (j) => j.status === "succeeded");
    expect(job.lastResult).toMatchObject({ status: 200 });
    expect(job.attempts).toBe(1);
  });

  it("the docs' Python snippet, run with python3, verifies a real delivery and rejects tampering", async () => {
    t = await startTestService();
    rx = await startReceiver();
    const c = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 0, target: rx.url, payload: { text: "café ☕" } },
    });
    const req = await rx.nth(1);
    const stale = String(Number(req.headers["duetime-timestamp"]) - 3600);
    const cases = [
      { secret: t.acme.secret, headers: req.headers, body: req.body },
      { secret: t.umbrella.secret, headers: req.headers, body: req.body },
      { secret: t.acme.secret, headers: req.headers, body: req.body.replace("café", "cafe") },
      {
        secret: t.acme.secret,
        headers: { ...req.headers, "duetime-timestamp": stale },
        body: req.body,
      },
    ];
    expect(await runPythonSnippet(cases)).toEqual([true, false, false, false]);
    await waitForJob(t, c.body.job.id, (j) => j.status === "succeeded");
  });

  it("retries 5xx and 408 with backoff, then succeeds; the last error names the status", async () => {
    t = await startTestService();
    rx = await startReceiver((_r, i) =>
      i === 1 ? { status: 503, body: "maintenance" } : i === 2 ? { status: 408 } : { status: 204 },
    );
    const c = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 0, target: rx.url, maxAttempts: 5 },
    });
    const job = await waitForJob(t, c.body.job.id, (j) => j.status === "succeeded");
    expect(job.attempts).toBe(3);
    expect(job.lastResult).toMatchObject({ status: 204 });
    expect(rx.requests.map((r) => r.headers["duetime-attempt"])).toEqual(["1", "2", "3"]);
    for (const r of rx.requests)
      expect(verifyFromDocs(t.acme.secret, r.headers, r.body)).toBe(true);
  });

  it("a 429 with Retry-After sets the next attempt that far out", async () => {
    t = await startTestService();
    rx = await startReceiver(() => ({ status: 429, headers: { "retry-after": "120" } }));
    const before = Date.now();
    const c = await t.api("POST", "/v1/jobs", { body: { delayMs: 0, target: rx.url } });
    const job = await waitForJob(
      t,
      c.body.job.id,
      (j) => j.attempts === 1 && j.status === "pending",
    );
    expect(job.lastError).toContain("HTTP 429");
    expect(Date.parse(job.dueAt)).toBeGreaterThanOrEqual(before + 120_000);
  });

  it("any other 4xx is dead at once, keeping the status and body", async () => {
    t = await startTestService();
    rx = await startReceiver(() => ({ status: 404, body: "no such hook" }));
    const c = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 0, target: rx.url, maxAttempts: 5 },
    });
    const job = await waitForJob(t, c.body.job.id, (j) => j.status === "dead");
    expect(job.attempts).toBe(1);
    expect(job.lastError).toMatch(/HTTP 404: no such hook/);
    expect(rx.requests).toHaveLength(1);
  });

  it("timeouts and refused connections are retried until attempts run out", async () => {
    t = await startTestService({ webhookTimeoutMs: 150 });
    rx = await startReceiver(() => ({ status: 200, delayMs: 2000 }));
    const slow = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 0, target: rx.url, maxAttempts: 2 },
    });
    const s = await waitForJob(t, slow.body.job.id, (j) => j.status === "dead");
    expect(s.attempts).toBe(2);
    expect(s.lastError).toMatch(/timeout/);
    const closed = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 0, target: "http://127.0.0.1:9/nothing-listens", maxAttempts: 2 },
    });
    const d = await waitForJob(t, closed.body.job.id, (j) => j.status === "dead");
    expect(d.attempts).toBe(2);
    expect(d.lastError).toMatch(/ECONNREFUSED/);
  });
});

describe("with the scheduler's clock driven by the test", () => {
  it("a job due in 10 minutes fires when the clock gets there, and shows in the stats", async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 1, 10, 0, 0));
    t = await startTestService({ clock });
    rx = await startReceiver();
    const c = await t.api("POST", "/v1/jobs", {
      body: { dueAt: "in 10 minutes", target: rx.url, payload: { n: 1 } },
    });
    expect(c.body.job.dueAt).toBe("2026-03-01T10:10:00.000Z");
    await clock.advance(9 * 60_000);
    expect(rx.requests).toHaveLength(0);
    await clock.advance(60_000);
    const req = await rx.nth(1);
    expect(JSON.parse(req.body).dueAt).toBe("2026-03-01T10:10:00.000Z");
    expect(verifyFromDocs(t.acme.secret, req.headers, req.body)).toBe(true);
    const job = await waitForJob(t, c.body.job.id, (j) => j.status === "succeeded");
    expect(job.firedAt).toBe("2026-03-01T10:10:00.000Z");
    const stats = (await t.api("GET", "/v1/stats")).body;
    expect(stats.counts.succeeded).toBe(1);
    expect(stats.lateness.count).toBe(1);
    const minute = stats.perMinute.find(
      (m: { minute: string }) => m.minute === "2026-03-01T10:10:00.000Z",
    );
    expect(minute.succeeded).toBe(1);
    expect(minute.fired).toBe(1); // the deprecated alias of succeeded, kept for one release
    // Another tenant's stats do not see it.
    const theirs = (await t.api("GET", "/v1/stats", { key: t.umbrella.key })).body;
    expect(theirs.lateness.count).toBe(0);
    expect(theirs.counts.succeeded).toBe(0);
  });
});

describe("private targets (SSRF guard)", () => {
  it("refuses private and loopback targets at creation without --allow-private-targets", async () => {
    t = await startTestService({ allowPrivateTargets: false });
    for (const target of [
      "http://127.0.0.1:8080/x",
      "http://10.1.2.3/x",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/x",
      "http://[::ffff:127.0.0.1]/x",
      "http://localhost:3000/x",
      "http://0.0.0.0/x",
    ]) {
      const r = await t.api("POST", "/v1/jobs", { body: { delayMs: 0, target } });
      expect(r.status, target).toBe(400);
      expect(r.body.error.field).toBe("target");
    }
    const ok = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 60_000, target: "https://example.com/hook" },
    });
    expect(ok.status).toBe(201);
  });

  it("checks the resolved address at connect time: a name resolving to loopback is refused", async () => {
    rx = await startReceiver();
    const attempts: string[] = [];
    const delivery = createWebhookDelivery({
      secretFor: async () => "whsec_test",
      allowPrivateTargets: false,
      onAttempt: (a) => attempts.push(a.outcome),
    });
    const port = new URL(rx.url).port;
    const job = {
      id: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
      tenant: "acme",
      key: null,
      dueAt: Date.now(),
      payload: null,
      // "localhost" is a name: only the DNS answer (127.0.0.1 / ::1) says it is private.
      target: `http://localhost:${port}/hook`,
      targetOptions: null,
    } as unknown as Job;
    const ctx = { signal: new AbortController().signal, attempt: 1, latenessMs: 0 };
    const err = await Promise.resolve(delivery.handler(job, ctx)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermanentJobError);
    // The job's owner reads its own host, never the internal address it resolved to.
    expect((err as Error).message).toMatch(/^refused: localhost resolves to a private/);
    expect((err as Error).message).not.toMatch(/127\.0\.0\.1|::1/);
    expect(attempts).toEqual(["refused"]);
    expect(rx.requests).toHaveLength(0);
    await delivery.close();

    // The same delivery with private targets allowed reaches the receiver.
    const open = createWebhookDelivery({
      secretFor: async () => "whsec_test",
      allowPrivateTargets: true,
    });
    await expect(Promise.resolve(open.handler(job, ctx))).resolves.toMatchObject({ status: 200 });
    expect(rx.requests).toHaveLength(1);
    await open.close();
  });

  it("classifies addresses", () => {
    for (const a of [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "fe80::1",
      "fd12:3456::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "64:ff9b::a9fe:a9fe",
      "not-an-ip",
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of [
      "8.8.8.8",
      "1.1.1.1",
      "93.184.216.34",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8",
    ]) {
      expect(isPrivateAddress(a), a).toBe(false);
    }
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 12:01:00 GMT", now)).toBe(60_000);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(new RetryLaterError("x", 5).retryAfterMs).toBe(5);
  });
});
