import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { call } from "../mcp/helpers.js";
import { startTestService, type TestService } from "./helpers.js";

let t: TestService | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await t?.close();
  t = undefined;
});

const FAR = { delayMs: 86_400_000, target: "https://example.com/hook" };

async function counts(svc: TestService, key: string): Promise<Record<string, number>> {
  const r = await svc.api("GET", "/v1/stats", { key });
  return r.body.counts as Record<string, number>;
}

describe("per-tenant quotas (real HTTP on 127.0.0.1, real SQLite)", () => {
  it("refuses a create past the tenant's live jobs with 429, Retry-After and nothing written", async () => {
    t = await startTestService({ quotas: { maxLiveJobs: 3 } });
    const batch = await t.api("POST", "/v1/jobs/batch", { body: { jobs: [FAR, FAR] } });
    expect(batch.status).toBe(201);
    const third = await t.api("POST", "/v1/jobs", { body: FAR });
    expect(third.status).toBe(201);
    const fourth = await t.api("POST", "/v1/jobs", { body: FAR });
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get("retry-after")).toBe("60");
    expect(fourth.body.error).toMatchObject({
      code: "quota-exceeded",
      field: "tenant",
      expected: "at most 3 live jobs (pending or claimed)",
      received: "3 live and 1 more",
    });
    expect(fourth.body.quota).toBe("liveJobs");
    expect(await counts(t, t.acme.key)).toMatchObject({ pending: 3 });
    // a batch that would pass the quota is refused whole
    await t.api("POST", `/v1/jobs/${third.body.job.id}/cancel`);
    const two = await t.api("POST", "/v1/jobs/batch", { body: { jobs: [FAR, FAR] } });
    expect(two.status).toBe(429);
    expect(await counts(t, t.acme.key)).toMatchObject({ pending: 2, cancelled: 1 });
    expect((await t.api("POST", "/v1/jobs", { body: FAR })).status).toBe(201);
    // the quota is per tenant: umbrella has its own
    const other = await t.api("POST", "/v1/jobs", { key: t.umbrella.key, body: FAR });
    expect(other.status).toBe(201);
  });

  it("refuses creates past the tenant's rate with 429 and Retry-After, counting each job of a batch", async () => {
    t = await startTestService({ quotas: { createsPerSecond: 1, createsBurst: 3 } });
    const batch = await t.api("POST", "/v1/jobs/batch", { body: { jobs: [FAR, FAR, FAR] } });
    expect(batch.status).toBe(201);
    const next = await t.api("POST", "/v1/jobs", { body: FAR });
    expect(next.status).toBe(429);
    expect(Number(next.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(next.body.error).toMatchObject({
      code: "quota-exceeded",
      field: "tenant",
      expected: "at most 1 new jobs per second (burst 3)",
    });
    expect(next.body.quota).toBe("createsPerSecond");
    const tooBig = await t.api("POST", "/v1/jobs/batch", {
      key: t.umbrella.key,
      body: { jobs: [FAR, FAR, FAR, FAR] },
    });
    expect(tooBig.status).toBe(429);
    expect(tooBig.body.error.received).toBe("4 jobs at once, more than the burst");
    expect(await counts(t, t.acme.key)).toMatchObject({ pending: 3 });
    expect(await counts(t, t.umbrella.key)).toMatchObject({ pending: 0 });
    expect((await t.api("POST", "/v1/jobs", { key: t.umbrella.key, body: FAR })).status).toBe(201);
  });

  it("holds series creation to the same quotas: a new series is one live job and one create", async () => {
    t = await startTestService({ quotas: { maxLiveJobs: 2 } });
    const daily = { cron: "0 9 * * *", timeZone: "UTC", target: FAR.target };
    expect((await t.api("POST", "/v1/jobs", { body: FAR })).status).toBe(201);
    const first = await t.api("POST", "/v1/schedules", { body: { ...daily, key: "standup" } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const over = await t.api("POST", "/v1/schedules", { body: daily });
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("60");
    expect(over.body.error).toMatchObject({
      code: "quota-exceeded",
      field: "tenant",
      expected: "at most 2 live jobs (pending or claimed)",
      received: "2 live and 1 more",
    });
    expect(over.body.quota).toBe("liveJobs");
    // nothing written: one series, and its occurrence the only live job beside the first
    expect((await t.api("GET", "/v1/schedules")).body.schedules).toHaveLength(1);
    expect(await counts(t, t.acme.key)).toMatchObject({ pending: 2 });
    // the stored series under its key is returned, not created: no quota asked
    const again = await t.api("POST", "/v1/schedules", { body: { ...daily, key: "standup" } });
    expect(again.status).toBe(200);
    expect(again.body.schedule.id).toBe(first.body.schedule.id);
    await t.close();

    t = await startTestService({ quotas: { createsPerSecond: 1, createsBurst: 2 } });
    expect((await t.api("POST", "/v1/jobs/batch", { body: { jobs: [FAR, FAR] } })).status).toBe(
      201,
    );
    const fast = await t.api("POST", "/v1/schedules", { body: daily });
    expect(fast.status).toBe(429);
    expect(Number(fast.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(fast.body.quota).toBe("createsPerSecond");
    expect((await t.api("GET", "/v1/schedules")).body.schedules).toHaveLength(0);
  });

  it("holds a series' resume to the live-jobs quota: the occurrence it writes is a new live job", async () => {
    t = await startTestService({ quotas: { maxLiveJobs: 2 } });
    const daily = { cron: "0 9 * * *", timeZone: "UTC", target: FAR.target };
    const created = await t.api("POST", "/v1/schedules", { body: daily });
    const id = created.body.schedule.id as string;
    expect((await t.api("POST", `/v1/schedules/${id}/pause`)).status).toBe(200);
    expect((await t.api("POST", "/v1/jobs/batch", { body: { jobs: [FAR, FAR] } })).status).toBe(
      201,
    );
    const over = await t.api("POST", `/v1/schedules/${id}/resume`);
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({
      code: "quota-exceeded",
      received: "2 live and 1 more",
    });
    // nothing written: still paused, no occurrence, the two jobs the only live ones
    const after = await t.api("GET", `/v1/schedules/${id}`);
    expect(after.body.schedule).toMatchObject({ state: "paused", nextJobId: null });
    expect(await counts(t, t.acme.key)).toMatchObject({ pending: 2 });
  });

  it("holds task.create over MCP to the same quota", async () => {
    t = await startTestService({ quotas: { maxLiveJobs: 1 } });
    expect((await t.api("POST", "/v1/jobs", { body: FAR })).status).toBe(201);
    const client = new Client({ name: "quota-test", version: "1.0.0" });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.svc.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${t.acme.key}` } },
      }),
    );
    const r = await call(client, "task.create", {
      description: "over quota",
      scheduled_at: "in 1 hour",
    });
    expect(r.isError).toBe(true);
    expect(r.structured).toMatchObject({ error: "quota-exceeded", quota: "liveJobs" });
    expect(r.text).toMatch(/at most 1 live jobs.*try again in 60 s/);
    expect(await counts(t, t.acme.key)).toMatchObject({ pending: 1 });
  });
});
