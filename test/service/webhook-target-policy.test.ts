import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call } from "../mcp/helpers.js";
import {
  startReceiver,
  startTestService,
  waitForJob,
  type Receiver,
  type TestService,
} from "./helpers.js";

/**
 * Issue 10 §1: webhook headers that cannot be sent (Expect, Upgrade, Keep-Alive, values with
 * control or non-Latin-1 characters) were accepted at create and only killed the job at
 * delivery, and a target with CR/LF was stripped when sent but stored as written. One policy
 * (core/webhook-target.ts) now refuses them at create, with the same rules and limits on
 * POST /v1/jobs and the MCP tools, and holds stored jobs to it at delivery.
 */

let t: TestService;
let rx: Receiver;
let mcp: Client;

beforeAll(async () => {
  t = await startTestService();
  rx = await startReceiver();
  const transport = new StreamableHTTPClientTransport(new URL(`${t.svc.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${t.acme.key}` } },
  });
  mcp = new Client({ name: "webhook-target-policy", version: "1.0.0" });
  await mcp.connect(transport);
});
afterAll(async () => {
  await mcp.close();
  await t.close();
  await rx.close();
});

let storedBefore = 0;
beforeEach(async () => {
  storedBefore = await stored();
});

async function stored(): Promise<number> {
  const counts = await t.svc.scheduler.counts();
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** The same job refused by POST /v1/jobs and by task.create, naming the same field. */
async function expectRefusedEverywhere(
  job: { target: string; headers?: Record<string, unknown> },
  field: { http: string; mcp: string },
  expected: RegExp,
): Promise<void> {
  const r = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, ...job } });
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.error.field).toBe(field.http);
  expect(r.body.error.expected).toMatch(expected);
  const m = await call(mcp, "task.create", {
    description: "policy",
    scheduled_at: "in 1 hour",
    webhook_url: job.target,
    ...(job.headers === undefined ? {} : { webhook_headers: job.headers }),
  });
  expect(m.isError, m.text).toBe(true);
  expect(m.text.startsWith(`${field.mcp}: expected `), m.text).toBe(true);
  expect(m.text).toMatch(expected);
  expect(await stored()).toBe(storedBefore);
}

const URL_OK = "https://hooks.example.com/x";

describe("headers that cannot be sent are refused at create, the same on HTTP and MCP", () => {
  it.each(["Expect", "Upgrade", "Keep-Alive", "TE", "Trailer", "Transfer-Encoding", "Connection"])(
    "refuses the connection-level header %s",
    async (name) => {
      await expectRefusedEverywhere(
        { target: URL_OK, headers: { [name]: "x" } },
        { http: `headers.${name}`, mcp: `webhook_headers.${name}` },
        /a header a job may set \(not content-type, .*expect.*, duetime-\*\)/,
      );
    },
  );

  it.each(["Host", "Content-Length", "User-Agent", "Duetime-Signature", "duetime-anything"])(
    "refuses the service's own header %s",
    async (name) => {
      await expectRefusedEverywhere(
        { target: URL_OK, headers: { [name]: "x" } },
        { http: `headers.${name}`, mcp: `webhook_headers.${name}` },
        /a header a job may set/,
      );
    },
  );

  it.each([
    ["a control character", "a\u0001b"],
    ["DEL", "a\u007fb"],
    ["a C1 control", "a\u0085b"],
    ["a line break", "a\r\nInjected: 1"],
    ["a NUL", "a\u0000"],
    ["a character beyond Latin-1", "5 \u20ac"],
    ["CJK text", "\u65e5\u672c"],
    ["an emoji", "ok \u{1f600}"],
    ["leading whitespace", " token"],
    ["trailing whitespace", "token\t"],
  ])("refuses a value with %s", async (_what, value) => {
    await expectRefusedEverywhere(
      { target: URL_OK, headers: { "X-Value": value } },
      { http: "headers.X-Value", mcp: "webhook_headers.X-Value" },
      /printable Latin-1 characters/,
    );
  });

  it("applies one set of limits: 20 headers, names of 64 and values of 1024 characters, each name once", async () => {
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, "v"]));
    await expectRefusedEverywhere(
      { target: URL_OK, headers: many },
      { http: "headers", mcp: "webhook_headers" },
      /at most 20 headers/,
    );
    await expectRefusedEverywhere(
      { target: URL_OK, headers: { [`X-${"n".repeat(63)}`]: "v" } },
      { http: `headers.X-${"n".repeat(63)}`, mcp: `webhook_headers.X-${"n".repeat(63)}` },
      /an HTTP token of 1 to 64 characters/,
    );
    await expectRefusedEverywhere(
      { target: URL_OK, headers: { "X-Long": "v".repeat(1025) } },
      { http: "headers.X-Long", mcp: "webhook_headers.X-Long" },
      /at most 1024 characters/,
    );
    await expectRefusedEverywhere(
      { target: URL_OK, headers: { "X-Twice": "1", "x-twice": "2" } },
      { http: "headers.x-twice", mcp: "webhook_headers.x-twice" },
      /each header name once/,
    );
    // At the limits, both accept.
    const atLimits = {
      ...Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`X-H${i}`, "v"])),
      [`X-${"n".repeat(62)}`]: "v".repeat(1024),
    };
    const r = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 60_000, target: URL_OK, headers: atLimits },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const m = await call(mcp, "task.create", {
      description: "limits",
      scheduled_at: "in 1 hour",
      webhook_url: URL_OK,
      webhook_headers: atLimits,
    });
    expect(m.isError, m.text).toBe(false);
  });
});

describe("targets are stored as they are sent", () => {
  it.each([
    ["CR/LF in the path", "https://hooks.example.com/a\r\nb"],
    ["LF in the host", "https://hooks.exa\nmple.com/x"],
    ["a tab", "https://hooks.example.com/\tx"],
    ["a leading space", " https://hooks.example.com/x"],
    ["a space in the path", "https://hooks.example.com/a b"],
    ["a NUL", "https://hooks.example.com/x\u0000"],
    ["a C1 control", "https://hooks.example.com/x\u0085"],
  ])("refuses a target with %s", async (_what, target) => {
    await expectRefusedEverywhere(
      { target },
      { http: "target", mcp: "webhook_url" },
      /without spaces or control characters/,
    );
  });

  it("names the offending character in the error", async () => {
    const r = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 60_000, target: "https://hooks.example.com/a\r\nb" },
    });
    expect(r.body.error.message).toMatch(/U\+000D at index 27/);
  });
});

describe("what the policy accepts is delivered exactly as stored", () => {
  it("sends Latin-1 values and tabs byte for byte", async () => {
    const before = rx.requests.length;
    const headers = { "X-Latin": "caf\u00e9 \u00bd", "X-Tab": "a\tb" };
    const r = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 0, target: `${rx.url}?q=1`, headers },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const req = await rx.nth(before + 1);
    expect(req.url).toBe("/hook?q=1");
    // Node reads header bytes as Latin-1.
    expect(req.headers["x-latin"]).toBe("caf\u00e9 \u00bd");
    expect(req.headers["x-tab"]).toBe("a\tb");
    await waitForJob(t, r.body.job.id, (j) => j.status === "succeeded");
  });

  it("a stored job whose headers break the policy (written before it, or by the library) is dead at its first attempt, not retried", async () => {
    const before = rx.requests.length;
    const { job } = await t.svc.scheduler.schedule({
      tenant: "acme",
      dueAt: Date.now(),
      target: rx.url,
      targetOptions: { headers: { Expect: "100-continue" } },
      maxAttempts: 5,
    });
    const dead = await waitForJob(t, job.id, (j) => j.status === "dead");
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toMatch(
      /^not deliverable: headers\.Expect: expected a header a job may set/,
    );
    expect(rx.requests).toHaveLength(before);
  });
});
