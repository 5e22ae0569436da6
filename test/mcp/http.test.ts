import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMcpHttpHandler } from "../../src/mcp/http.js";
import { registerMcpTargets } from "../../src/mcp/reminders.js";
import { makeHarness } from "../support/harness.js";
import { call, callTask } from "./helpers.js";

/**
 * The /mcp handler mounted as the HTTP service mounts it (after a bearer check that maps a
 * key to a tenant), on a plain node:http server on loopback, driven by the official SDK's
 * streamable-HTTP client. The scheduler runs on a ManualClock: time passes when told to.
 */

const KEYS: Record<string, string> = { "key-a": "tenant-a", "key-b": "tenant-b" };
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: ReturnType<typeof makeHarness>;
let http: Server;
let url: URL;
const clients: Client[] = [];

beforeEach(async () => {
  // Long idle timers: jumping a day ahead on the manual clock then takes few steps.
  h = makeHarness({ start: T0, maxIdleMs: 3_600_000, leaseSweepIntervalMs: 3_600_000 });
  registerMcpTargets(h.scheduler);
  const handler = createMcpHttpHandler({
    scheduler: h.scheduler,
  });
  http = createServer((req, res) => {
    // Test-only stand-in for the service's bearer hook.
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const tenant = key === undefined ? undefined : KEYS[key];
    if (tenant === undefined) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    void readJson(req).then((body) =>
      handler(req, res, { tenant, body }).catch((err: unknown) => {
        res.writeHead(500).end(String(err));
      }),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await new Promise((resolve) => http.close(resolve));
  await h.close();
});

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : (JSON.parse(text) as unknown);
}

async function connect(key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: `test-${key}`, version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

describe("MCP over streamable HTTP", () => {
  it("scopes every tool to the key's tenant: another tenant's task is not found", async () => {
    const a = await connect("key-a");
    const b = await connect("key-b");
    const task = await callTask(a, "task.create", {
      description: "tenant A's secret",
      scheduled_at: "in 10 minutes",
      idempotency_key: "same-key",
    });
    expect(task.scheduled_at).toBe(new Date(T0 + 600_000).toISOString());
    expect((await h.scheduler.get(task.id))?.tenant).toBe("tenant-a");

    for (const [tool, args] of [
      ["task.status", { id: task.id }],
      ["task.cancel", { id: task.id }],
      ["task.reschedule", { id: task.id, scheduled_at: "in 1 hour" }],
    ] as const) {
      const r = await call(b, tool, args);
      expect(r.isError, tool).toBe(true);
      expect(r.text).toBe(`not-found: no task ${task.id} (task not found)`);
    }
    const listB = await call(b, "task.list", {});
    expect(listB.structured).toEqual({
      tasks: [],
      next_cursor: null,
      series: [],
      series_next_cursor: null,
    });
    // The same idempotency key in tenant B is B's own: a new task, not A's.
    const bTask = await callTask(b, "task.create", {
      description: "tenant B's",
      scheduled_at: "in 10 minutes",
      idempotency_key: "same-key",
    });
    expect(bTask.id).not.toBe(task.id);

    // A still sees and owns its task, untouched by B's attempts.
    const shown = await callTask(a, "task.status", { id: task.id });
    expect(shown).toMatchObject({
      status: "pending",
      version: 1,
      description: "tenant A's secret",
    });
    const listA = await call(a, "task.list", {});
    expect((listA.structured.tasks as { id: string }[]).map((t) => t.id)).toEqual([task.id]);
    const again = await call(a, "task.create", {
      description: "dup",
      scheduled_at: "in 5 minutes",
      idempotency_key: "same-key",
    });
    expect(again.structured).toMatchObject({ outcome: "existing", task: { id: task.id } });
    expect((await call(a, "task.cancel", { id: task.id })).structured).toMatchObject({
      outcome: "cancelled",
    });
  });

  it("refuses requests without a valid key before MCP sees them", async () => {
    await expect(connect("key-z")).rejects.toMatchObject({ code: 401 });
    const res = await fetch(url, { headers: { authorization: "Bearer key-a" } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("fires a reminder when its time comes and task.status shows it succeeded", async () => {
    const a = await connect("key-a");
    h.scheduler.start();
    const task = await callTask(a, "task.create", {
      description: "standup",
      scheduled_at: "tomorrow 9am",
      timezone: "Europe/Paris",
    });
    // 2026-03-02 09:00 in Paris (UTC+1 in March before the switch) is 08:00 UTC.
    const due = Date.UTC(2026, 2, 2, 8, 0, 0);
    expect(task.scheduled_at).toBe(new Date(due).toISOString());
    expect(task.scheduled_at_local).toBe("2026-03-02T09:00:00.000+01:00");
    await h.clock.advanceTo(due - 5_000);
    expect((await callTask(a, "task.status", { id: task.id })).status).toBe("pending");
    // Within the timing wheel's horizon it is claimed (held in memory), then fired at `due`.
    await h.clock.advanceTo(due - 1);
    expect((await callTask(a, "task.status", { id: task.id })).status).toBe("claimed");
    await h.clock.advanceTo(due);
    await h.scheduler.idle();
    const fired = await call(a, "task.status", { id: task.id });
    expect(fired.text.split("\n")[0]).toBe(
      `succeeded: task ${task.id} "standup" completed, fired at ${new Date(due).toISOString()} (due 2026-03-02T09:00:00.000+01:00)`,
    );
    expect(fired.structured.task).toMatchObject({
      status: "succeeded",
      attempts: 1,
      fired_at: new Date(due).toISOString(),
      last_result: { reminded: true, description: "standup" },
    });
    const late = await call(a, "task.cancel", { id: task.id });
    expect(late.isError).toBe(true);
    expect(late.structured).toMatchObject({ outcome: "too-late", task: { status: "succeeded" } });
    const done = await call(a, "task.list", { status: "succeeded" });
    expect((done.structured.tasks as { id: string }[]).map((t) => t.id)).toEqual([task.id]);
  });

  it("stores webhook tasks for the service to deliver, after the service's own checks", async () => {
    const a = await connect("key-a");
    const hook = await callTask(a, "task.create", {
      description: "invoice follow-up",
      scheduled_at: "2026-03-05T12:00:00Z",
      timezone: "America/New_York",
      webhook_url: "https://example.com/hooks/invoice",
      webhook_headers: { "X-Invoice": "42" },
      payload: { invoice: 42 },
      max_attempts: 5,
      expire_after_ms: 3_600_000,
    });
    expect(hook).toMatchObject({
      kind: "webhook",
      webhook_url: "https://example.com/hooks/invoice",
      scheduled_at_local: "2026-03-05T07:00:00.000-05:00",
    });
    const job = await h.scheduler.get(hook.id);
    expect(job).toMatchObject({
      tenant: "tenant-a",
      target: "https://example.com/hooks/invoice",
      targetOptions: { headers: { "X-Invoice": "42" } },
      payload: {
        description: "invoice follow-up",
        timezone: "America/New_York",
        data: { invoice: 42 },
      },
      maxAttempts: 5,
      expireAfterMs: 3_600_000,
    });
    const refused = await call(a, "task.create", {
      description: "x",
      scheduled_at: "in 1h",
      webhook_url: "http://10.0.0.1/hook",
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toBe(
      "webhook_url: expected a URL of a public host (private, loopback, link-local and other " +
        'internal addresses are refused), received "http://10.0.0.1/hook"',
    );
    const header = await call(a, "task.create", {
      description: "x",
      scheduled_at: "in 1h",
      webhook_url: "https://example.com/h",
      webhook_headers: { "X-Bad": "a\r\nInjected: 1" },
    });
    expect(header.text).toMatch(
      /^webhook_headers\.X-Bad: expected a header value of printable Latin-1 characters \(no control characters, no line breaks/,
    );
  });

  it("task.create takes onSuccess/onFailure/onDead callbacks under the webhook address rules", async () => {
    const a = await connect("key-a");
    const task = await callTask(a, "task.create", {
      description: "renewal",
      scheduled_at: "in 1h",
      webhook_url: "https://example.com/hooks/renew",
      callbacks: { onSuccess: "https://example.com/ok", onDead: "https://example.com/dead" },
    });
    expect((await h.scheduler.get(task.id))!.callbacks).toEqual({
      onSuccess: "https://example.com/ok",
      onDead: "https://example.com/dead",
    });
    const before = (await h.scheduler.list({ tenant: "tenant-a", limit: 100 })).jobs.length;
    const privateUrl = await call(a, "task.create", {
      description: "x",
      scheduled_at: "in 1h",
      callbacks: { onFailure: "http://10.0.0.1/fail" },
    });
    expect(privateUrl.isError).toBe(true);
    expect(privateUrl.text).toBe(
      "callbacks.onFailure: expected a URL of a public host (private, loopback, link-local and " +
        'other internal addresses are refused), received "http://10.0.0.1/fail"',
    );
    const notUrl = await call(a, "task.create", {
      description: "x",
      scheduled_at: "in 1h",
      callbacks: { onDead: "ftp://example.com/x" },
    });
    expect(notUrl.text).toMatch(/^callbacks\.onDead: expected an http\(s\) URL/);
    const unknown = await call(a, "task.create", {
      description: "x",
      scheduled_at: "in 1h",
      callbacks: { onDone: "https://example.com/x" },
    });
    expect(unknown.text).toMatch(/callbacks\.onDone: expected no such field/);
    const series = await call(a, "task.create", {
      description: "x",
      recurrence: "every day at 9:00",
      callbacks: { onDead: "https://example.com/dead" },
    });
    expect(series.text).toMatch(/^callbacks: expected no callbacks with recurrence/);
    expect((await h.scheduler.list({ tenant: "tenant-a", limit: 100 })).jobs).toHaveLength(before);
  });

  it("reschedules on the scheduler's clock with the version check", async () => {
    const a = await connect("key-a");
    const task = await callTask(a, "task.create", {
      description: "snooze me",
      scheduled_at: "in 1h",
    });
    const r = await call(a, "task.reschedule", {
      id: task.id,
      scheduled_at: "in 2 hours",
      expected_version: task.version,
    });
    expect(r.structured).toMatchObject({
      outcome: "rescheduled",
      task: { scheduled_at: new Date(T0 + 7_200_000).toISOString(), version: task.version + 1 },
    });
    const stale = await call(a, "task.reschedule", {
      id: task.id,
      scheduled_at: "in 3 hours",
      expected_version: task.version,
    });
    expect(stale.isError).toBe(true);
    expect(stale.text).toMatch(
      /^version-conflict: not rescheduled; task .* is at version 2, expected 1/,
    );
    const typo = await call(a, "task.reschedule", { id: task.id, scheduled_at: "in 3 lightyears" });
    expect(typo.text).toMatch(/^scheduled_at: expected .*, received "in 3 lightyears"$/);
  });
});

describe("MCP keys (issue 13 §1)", () => {
  it("replaces by key_mode and finds, moves and cancels a task by idempotency_key", async () => {
    const a = await connect("key-a");
    const b = await connect("key-b");
    const first = await call(a, "task.create", {
      description: "stand-up",
      scheduled_at: "in 10 minutes",
      idempotency_key: "standup:42",
    });
    expect(first.structured.outcome).toBe("created");
    const replaced = await call(a, "task.create", {
      description: "stand-up, moved",
      scheduled_at: "in 20 minutes",
      idempotency_key: "standup:42",
      key_mode: "replace",
    });
    expect(replaced.isError).toBe(false);
    expect(replaced.structured).toMatchObject({
      outcome: "replaced",
      job_id: first.structured.job_id,
    });
    expect(replaced.text).toMatch(/^replaced: live task /);

    const byKey = await callTask(a, "task.status", { idempotency_key: "standup:42" });
    expect(byKey).toMatchObject({
      id: first.structured.job_id,
      description: "stand-up, moved",
      version: 2,
    });
    // another tenant's key is not found
    const other = await call(b, "task.cancel", { idempotency_key: "standup:42" });
    expect(other.isError).toBe(true);
    expect(other.structured).toMatchObject({ outcome: "not-found", idempotency_key: "standup:42" });

    const stale = await call(a, "task.reschedule", {
      idempotency_key: "standup:42",
      scheduled_at: "in 30 minutes",
      expected_version: 1,
    });
    expect(stale.structured.outcome).toBe("version-conflict");
    const moved = await callTask(a, "task.reschedule", {
      idempotency_key: "standup:42",
      scheduled_at: "in 30 minutes",
      expected_version: 2,
    });
    expect(Date.parse(moved.scheduled_at)).toBe(T0 + 30 * 60_000);
    const cancelled = await call(a, "task.cancel", { idempotency_key: "standup:42" });
    expect(cancelled.structured).toMatchObject({ outcome: "cancelled" });
    const gone = await call(a, "task.status", { idempotency_key: "standup:42" });
    expect(gone.text).toBe(
      'not-found: no live task holds idempotency_key "standup:42" (task not found)',
    );

    const both = await call(a, "task.cancel", { job_id: moved.id, idempotency_key: "x" });
    expect(both.text).toMatch(/^idempotency_key: expected to be given instead of job_id/);
    const bad = await call(a, "task.create", {
      description: "x",
      scheduled_at: "in 1 minute",
      idempotency_key: "k",
      key_mode: "merge",
    });
    expect(bad.text).toContain(
      'key_mode: expected one of keep, replace, debounce, received "merge"',
    );
    const noKey = await call(a, "task.create", {
      description: "x",
      scheduled_at: "in 1 minute",
      key_mode: "replace",
    });
    expect(noKey.text).toMatch(/^idempotency_key: expected a key \(keyMode replace/);
  });
});

describe("MCP tags (issue 13 §2)", () => {
  it("task.create takes tags, task.list filters by tag per tenant, the task view shows them", async () => {
    const a = await connect("key-a");
    const b = await connect("key-b");
    const created: string[] = [];
    for (const [i, tags] of [["user:42", "campaign:spring"], ["user:7"], ["user:42"]].entries()) {
      const task = await callTask(a, "task.create", {
        description: `reminder ${i}`,
        scheduled_at: `in ${10 - i} minutes`,
        tags,
      });
      expect(task.tags).toEqual(tags);
      created.push(task.id);
    }
    await call(b, "task.create", {
      description: "b's",
      scheduled_at: "in 1 minute",
      tags: ["user:42"],
    });
    const page = await call(a, "task.list", { tag: "user:42", limit: 1 });
    expect(page.text.split("\n")[0]).toBe(
      '1 task(s) tagged "user:42", in creation order; more tasks match: pass next_cursor as cursor',
    );
    const first = page.structured.tasks as { id: string; tags: string[] }[];
    expect(first.map((t) => t.id)).toEqual([created[0]]);
    expect(page.structured.series).toEqual([]);
    const rest = await call(a, "task.list", {
      tag: "user:42",
      cursor: page.structured.next_cursor,
    });
    expect((rest.structured.tasks as { id: string }[]).map((t) => t.id)).toEqual([created[2]]);
    expect(await callTask(a, "task.status", { job_id: created[1] })).toMatchObject({
      tags: ["user:7"],
    });
    const spaced = await call(a, "task.create", {
      description: "x",
      scheduled_at: "in 1 minute",
      tags: ["user 42"],
    });
    expect(spaced.isError).toBe(true);
    expect(spaced.text).toMatch(/^tags\[0\]: expected printable characters without spaces/);
    const series = await call(a, "task.create", {
      description: "x",
      recurrence: "every day at 9am",
      tags: ["user:42"],
    });
    expect(series.text).toMatch(/^tags: expected no tags with recurrence/);
    const bad = await call(a, "task.list", { tag: "a b" });
    expect(bad.text).toMatch(/^tag: expected printable characters without spaces/);
  });
});
