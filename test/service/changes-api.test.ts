import { afterEach, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers.js";

/** GET /v1/changes: the tenant's change feed over real HTTP, paged by cursor. */
let t: TestService;
afterEach(async () => {
  await t.close();
});

const later = () => new Date(Date.now() + 3_600_000).toISOString();

it("pages the tenant's changes by cursor, never another tenant's", async () => {
  t = await startTestService();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await t.api("POST", "/v1/jobs", {
      body: { dueAt: later(), target: "https://example.com/hook", payload: { i } },
    });
    expect(r.status).toBe(201);
    ids.push(r.body.job.id);
  }
  await t.api("POST", "/v1/jobs", {
    key: t.umbrella.key,
    body: { dueAt: later(), target: "https://example.com/hook" },
  });
  expect((await t.api("POST", `/v1/jobs/${ids[1]}/cancel`)).status).toBe(200);

  const first = await t.api("GET", "/v1/changes?limit=2");
  expect(first.status).toBe(200);
  expect(first.body.changes.map((c: { id: string; kind: string }) => [c.id, c.kind])).toEqual([
    [ids[0], "scheduled"],
    [ids[1], "scheduled"],
  ]);
  expect(first.body.changes[0]).toMatchObject({ status: "pending", attempts: 0, error: null });
  expect(Date.parse(first.body.changes[0].at)).not.toBeNaN();
  const rest = await t.api("GET", `/v1/changes?after=${first.body.next}`);
  expect(rest.body.changes.map((c: { id: string; kind: string }) => [c.id, c.kind])).toEqual([
    [ids[2], "scheduled"],
    [ids[1], "cancelled"],
  ]);
  const none = await t.api("GET", `/v1/changes?after=${rest.body.next}`);
  expect(none.body).toEqual({ changes: [], next: expect.any(String) });
  const theirs = await t.api("GET", "/v1/changes", { key: t.umbrella.key });
  expect(theirs.body.changes).toHaveLength(1);
});

it("answers bad input with 400 naming the field, never a 500", async () => {
  t = await startTestService();
  for (const [query, field] of [
    ["after=abc", "after"],
    ["after=1&after=2", "after"],
    ["after=99999999999999999999", "after"],
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=ten", "limit"],
    ["since=1", "since"],
  ] as const) {
    const r = await t.api("GET", `/v1/changes?${query}`);
    expect(r.status, query).toBe(400);
    expect(r.body.error.field, query).toBe(field);
  }
  expect((await t.api("GET", "/v1/changes", { key: null })).status).toBe(401);
});

it("refuses a cursor past the feed's head, as the event stream does, and takes the head", async () => {
  t = await startTestService();
  await t.api("POST", "/v1/jobs", {
    body: { dueAt: "in 1 hour", target: "https://example.com/h" },
  });
  const page = await t.api("GET", "/v1/changes");
  const head = page.body.next as string;
  expect((await t.api("GET", `/v1/changes?after=${head}`)).status).toBe(200);
  const past = await t.api("GET", `/v1/changes?after=${BigInt(head) + 1000n}`);
  expect(past.status).toBe(400);
  expect(past.body.error).toMatchObject({ field: "after" });
  expect(past.body.error.expected).toMatch(/at most its head/);
});
