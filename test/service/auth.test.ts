import { afterEach, describe, expect, it } from "vitest";
import { openKeyStore } from "../../src/service/keys.js";
import { startTestService, type TestService } from "./helpers.js";

let t: TestService | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const TARGET = "https://hooks.example.com/x";

describe("API keys", () => {
  it("every /v1 route and /mcp answer 401 without a valid key", async () => {
    t = await startTestService();
    const routes: [string, string, unknown?][] = [
      ["POST", "/v1/jobs", { delayMs: 1, target: TARGET }],
      ["POST", "/v1/jobs/batch", { jobs: [{ delayMs: 1, target: TARGET }] }],
      ["GET", "/v1/jobs"],
      ["GET", "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV"],
      ["POST", "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/reschedule", { delayMs: 1 }],
      ["POST", "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel"],
      ["GET", "/v1/stats"],
      ["POST", "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" }],
    ];
    for (const key of [null, "dtk_not-a-real-key", "garbage"]) {
      for (const [method, path, body] of routes) {
        const r = await t.api(method, path, { key, ...(body === undefined ? {} : { body }) });
        expect(r.status, `${method} ${path} with ${key}`).toBe(401);
        expect(r.body.error.code).toBe("unauthorized");
        expect(r.headers.get("www-authenticate")).toContain("Bearer");
      }
    }
    const basic = await t.api("GET", "/v1/jobs", {
      key: null,
      headers: { authorization: "Basic abc" },
    });
    expect(basic.status).toBe(401);
    expect((await t.api("GET", "/v1/stats")).status).toBe(200);
    expect(await countJobs(t)).toBe(0);
  });

  it("a revoked key stops working on the next request", async () => {
    t = await startTestService();
    expect((await t.api("GET", "/v1/jobs")).status).toBe(200);
    const keys = await openKeyStore(t.db);
    const both = [t.acme.keyId, t.umbrella.keyId, "key_unknown"];
    expect((await keys.apiKeysLive({ ids: both })).sort()).toEqual(both.slice(0, 2).sort());
    expect(await keys.apiKeyRevoke({ id: t.acme.keyId, now: Date.now() })).toBe(true);
    expect((await keys.apiKeysList({ tenant: "acme" }))[0]!.revokedAt).not.toBeNull();
    // what the event streams' re-check asks: the revoked key is no longer live
    expect(await keys.apiKeysLive({ ids: both })).toEqual([t.umbrella.keyId]);
    expect(await keys.apiKeysLive({ ids: [] })).toEqual([]);
    await keys.close();
    expect((await t.api("GET", "/v1/jobs")).status).toBe(401);
    expect((await t.api("GET", "/v1/jobs", { key: t.umbrella.key })).status).toBe(200);
  });

  it("keys are stored only as hashes", async () => {
    t = await startTestService();
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(t.db, { readonly: true });
    const dump = JSON.stringify(db.prepare("SELECT * FROM service_api_keys").all());
    db.close();
    expect(dump).not.toContain(t.acme.key);
    expect(dump).toContain(t.acme.key.slice(0, 10));
  });

  it("rate limits per key with 429 and Retry-After", async () => {
    t = await startTestService({ rateLimit: { perSecond: 1, burst: 3 } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.api("GET", "/v1/jobs")).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await t.api("GET", "/v1/jobs");
    expect(limited.body.error.code).toBe("rate-limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another key has its own bucket.
    expect((await t.api("GET", "/v1/jobs", { key: t.umbrella.key })).status).toBe(200);
  });
});

describe("tenant isolation", () => {
  it("another tenant's job answers exactly as a missing one on every route", async () => {
    t = await startTestService();
    const created = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 3_600_000, target: TARGET, key: "shared-key", payload: { secret: "acme" } },
    });
    const id = created.body.job.id;
    const missing = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    const other = { key: t.umbrella.key };
    const pairs: [string, (id: string) => string, unknown?][] = [
      ["GET", (x) => `/v1/jobs/${x}`],
      ["POST", (x) => `/v1/jobs/${x}/cancel`],
      ["POST", (x) => `/v1/jobs/${x}/reschedule`, { delayMs: 5000 }],
    ];
    for (const [method, path, body] of pairs) {
      const theirs = await t.api(method, path(id), { ...other, ...(body ? { body } : {}) });
      const none = await t.api(method, path(missing), { ...other, ...(body ? { body } : {}) });
      expect(theirs.status, `${method} ${path(id)}`).toBe(404);
      // Same answer, byte for byte, once the id itself is taken out.
      expect(JSON.stringify(theirs.body).replaceAll(id, "ID")).toBe(
        JSON.stringify(none.body).replaceAll(missing, "ID"),
      );
    }
    // With If-Match too: a version conflict must not reveal the job.
    const ifMatch = await t.api("POST", `/v1/jobs/${id}/reschedule`, {
      ...other,
      body: { delayMs: 5000 },
      headers: { "if-match": '"9"' },
    });
    expect(ifMatch.status).toBe(404);

    const list = await t.api("GET", "/v1/jobs?limit=1000", other);
    expect(list.body.jobs).toEqual([]);
    const stats = await t.api("GET", "/v1/stats", other);
    expect(stats.body.counts.pending).toBe(0);
    expect(stats.body.buckets).toEqual([]);

    // The same idempotency key in another tenant is another job.
    const same = await t.api("POST", "/v1/jobs", {
      ...other,
      body: { delayMs: 3_600_000, target: TARGET, key: "shared-key" },
    });
    expect(same.status).toBe(201);
    expect(same.body.job.id).not.toBe(id);
    const batch = await t.api("POST", "/v1/jobs/batch", {
      ...other,
      body: { jobs: [{ delayMs: 3_600_000, target: TARGET, key: "shared-key" }] },
    });
    expect(batch.body.jobs[0].job.id).toBe(same.body.job.id);
    expect(batch.body.jobs[0].job.tenant).toBe("umbrella");
    // A body cannot pick its tenant.
    const pick = await t.api("POST", "/v1/jobs", {
      ...other,
      body: { delayMs: 1000, target: TARGET, tenant: "acme" },
    });
    expect(pick.status).toBe(400);
    expect(pick.body.error.field).toBe("tenant");
    const pickList = await t.api("GET", "/v1/jobs?tenant=acme", other);
    expect(pickList.status).toBe(400);

    // Nothing of acme's changed.
    const mine = await t.api("GET", `/v1/jobs/${id}`);
    expect(mine.body.job).toEqual(created.body.job);
  });

  it("MCP over /mcp is scoped to the key's tenant", async () => {
    t = await startTestService();
    const rpc = (key: string, method: string, params: unknown) =>
      t!.api("POST", "/mcp", {
        key,
        headers: { accept: "application/json, text/event-stream" },
        body: { jsonrpc: "2.0", id: 1, method, params },
      });
    const list = await rpc(t.acme.key, "tools/list", {});
    expect(list.status).toBe(200);
    const names = list.body.result.tools.map((x: { name: string }) => x.name);
    expect(names).toEqual(
      expect.arrayContaining(["task.create", "task.list", "task.status", "task.cancel"]),
    );
    const created = await rpc(t.acme.key, "tools/call", {
      name: "task.create",
      arguments: { description: "stretch", scheduled_at: "in 2 hours" },
    });
    expect(created.status).toBe(200);
    expect(created.body.result.isError).not.toBe(true);
    const acmeJobs = await t.api("GET", "/v1/jobs");
    expect(acmeJobs.body.jobs).toHaveLength(1);
    const theirs = await t.api("GET", "/v1/jobs", { key: t.umbrella.key });
    expect(theirs.body.jobs).toHaveLength(0);
    // The service's target rules apply to webhooks created over MCP too.
    const privateHook = await rpc(t.acme.key, "tools/call", {
      name: "task.create",
      arguments: {
        description: "x",
        scheduled_at: "in 2 hours",
        webhook_url: "https://example.com/ok",
      },
    });
    expect(privateHook.body.result.isError).not.toBe(true);
  });
});

async function countJobs(s: TestService): Promise<number> {
  const a = (await s.api("GET", "/v1/stats")).body.counts;
  const b = (await s.api("GET", "/v1/stats", { key: s.umbrella.key })).body.counts;
  let n = 0;
  for (const c of [a, b]) for (const v of Object.values(c)) n += v as number;
  return n;
}
