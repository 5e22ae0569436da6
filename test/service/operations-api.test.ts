import { afterEach, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers.js";

/** /v1/operations: bulk operations by filter over real HTTP, per tenant. */
let t: TestService;
afterEach(async () => {
  await t.close();
});

const later = (h = 1) => new Date(Date.now() + h * 3_600_000).toISOString();

/** What a client does: read the operation until it ends (the runner starts it at once). */
async function ended(id: string, key?: string) {
  for (let i = 0; i < 500; i++) {
    const r = await t.api("GET", `/v1/operations/${id}`, key === undefined ? {} : { key });
    if (r.body.operation.state !== "queued" && r.body.operation.state !== "running") return r;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`operation ${id} did not end`);
}

it("counts at once, then cancels in the background; another tenant sees none of it", async () => {
  t = await startTestService();
  const ids: string[] = [];
  for (const key of ["user:42:a", "user:42:b", "user:7:a"]) {
    const r = await t.api("POST", "/v1/jobs", {
      body: { dueAt: later(), target: "https://example.com/hook", key },
    });
    ids.push(r.body.job.id);
  }
  const theirs = await t.api("POST", "/v1/jobs", {
    key: t.umbrella.key,
    body: { dueAt: later(), target: "https://example.com/hook", key: "user:42:a" },
  });
  const filter = { keyPrefix: "user:42:" };
  const count = await t.api("POST", "/v1/operations", {
    body: { kind: "count", of: "cancel", filter },
  });
  expect(count.status).toBe(200);
  expect(count.body.operation).toMatchObject({
    kind: "count",
    state: "done",
    changed: 2,
    of: "cancel",
  });

  const started = await t.api("POST", "/v1/operations", { body: { kind: "cancel", filter } });
  expect(started.status).toBe(202);
  expect(started.body.operation).toMatchObject({ kind: "cancel", filter, tenant: "acme" });
  const done = await ended(started.body.operation.id);
  expect(done.body.operation).toMatchObject({ state: "done", changed: 2, skipped: 0 });
  expect(Date.parse(done.body.operation.finishedAt)).not.toBeNaN();
  const statuses = await Promise.all(
    ids.map(async (id) => (await t.api("GET", `/v1/jobs/${id}`)).body.job.status),
  );
  expect(statuses).toEqual(["cancelled", "cancelled", "pending"]);
  const other = await t.api("GET", `/v1/jobs/${theirs.body.job.id}`, { key: t.umbrella.key });
  expect(other.body.job.status).toBe("pending");

  const opId = started.body.operation.id;
  expect((await t.api("GET", `/v1/operations/${opId}`, { key: t.umbrella.key })).status).toBe(404);
  expect(
    (await t.api("POST", `/v1/operations/${opId}/cancel`, { key: t.umbrella.key })).status,
  ).toBe(404);
  const mine = await t.api("GET", "/v1/operations?limit=1");
  expect(mine.body.operations.map((o: { id: string }) => o.id)).toEqual([opId]);
  expect(mine.body.nextCursor).toBe(opId);
  const older = await t.api("GET", `/v1/operations?cursor=${opId}`);
  expect(older.body.operations.map((o: { kind: string }) => o.kind)).toEqual(["count"]);
  expect((await t.api("GET", "/v1/operations", { key: t.umbrella.key })).body.operations).toEqual(
    [],
  );
  // cancelling an operation that ended answers it as it is
  const again = await t.api("POST", `/v1/operations/${opId}/cancel`);
  expect(again.status).toBe(200);
  expect(again.body.operation.state).toBe("done");
});

it("reschedules by a shift and erases by target", async () => {
  t = await startTestService();
  const due = later(2);
  const r = await t.api("POST", "/v1/jobs", {
    body: { dueAt: due, target: "https://example.com/a" },
  });
  const moved = await t.api("POST", "/v1/operations", {
    body: { kind: "reschedule", filter: { target: "https://example.com/a" }, shiftMs: 60_000 },
  });
  expect((await ended(moved.body.operation.id)).body.operation.changed).toBe(1);
  const job = (await t.api("GET", `/v1/jobs/${r.body.job.id}`)).body.job;
  expect(Date.parse(job.dueAt)).toBe(Date.parse(due) + 60_000);
  const erase = await t.api("POST", "/v1/operations", {
    body: { kind: "erase", filter: { target: "https://example.com/a" } },
  });
  expect((await ended(erase.body.operation.id)).body.operation.changed).toBe(1);
  expect((await t.api("GET", `/v1/jobs/${r.body.job.id}`)).status).toBe(404);
});

it("answers bad input with 400 naming the field, and writes nothing", async () => {
  t = await startTestService();
  for (const [body, field] of [
    [{ kind: "cancel", filter: {} }, "filter"],
    [{ kind: "cancel" }, "filter"],
    [{ kind: "drop", filter: { all: true } }, "kind"],
    [{ kind: "cancel", filter: { target: 5 } }, "filter.target"],
    [{ kind: "cancel", filter: { all: "yes" } }, "filter.all"],
    [{ kind: "cancel", filter: { dueFrom: "not a time" } }, "filter.dueFrom"],
    // a job tag's own rule (core/tags.ts TAG_RULE): no spaces, not only a length
    [{ kind: "cancel", filter: { tags: ["user:42", "user 42"] } }, "filter.tags[1]"],
    [{ kind: "cancel", filter: { tags: ["x".repeat(65)] } }, "filter.tags[0]"],
    [{ kind: "reschedule", filter: { all: true } }, "dueAt"],
    [{ kind: "reschedule", filter: { all: true }, dueAt: later(), shiftMs: 1 }, "dueAt"],
    [{ kind: "cancel", filter: { all: true }, extra: 1 }, "extra"],
    ["nope", "operation"],
  ] as const) {
    const r = await t.api("POST", "/v1/operations", { body });
    expect(r.status, JSON.stringify(body)).toBe(400);
    expect(r.body.error.field, JSON.stringify(body)).toBe(field);
  }
  for (const [query, field] of [
    ["state=gone", "state"],
    ["limit=0", "limit"],
    ["limit=x", "limit"],
    ["since=1", "since"],
  ] as const) {
    const r = await t.api("GET", `/v1/operations?${query}`);
    expect(r.status, query).toBe(400);
    expect(r.body.error.field, query).toBe(field);
  }
  expect((await t.api("GET", "/v1/operations")).body.operations).toEqual([]);
  expect((await t.api("GET", "/v1/operations/nope")).status).toBe(404);
});

it("a retried POST with the same key gives one operation; another request under it is 409 naming key", async () => {
  t = await startTestService();
  await t.api("POST", "/v1/jobs", {
    body: { dueAt: later(1), target: "https://example.com/a", tags: ["user:42"] },
  });
  const body = {
    kind: "cancel",
    filter: { tags: ["user:42"], dueTo: "in 2 hours" },
    key: "erase-request-42",
  };
  // a client that timed out and sent its POST again while the first was in flight
  const both = await Promise.all([1, 2].map(() => t.api("POST", "/v1/operations", { body })));
  expect(both.map((r) => r.status).sort()).toEqual([200, 202]);
  const first = both.find((r) => r.status === 202)!;
  const retried = both.find((r) => r.status === 200)!;
  expect(first.body).toMatchObject({ created: true, operation: { key: "erase-request-42" } });
  const id = first.body.operation.id as string;
  expect(retried.body).toMatchObject({ created: false, operation: { id } });
  const done = await ended(id);
  expect(done.body.operation).toMatchObject({ state: "done", changed: 1 });
  // once it ended, the same request still answers it
  const late = await t.api("POST", "/v1/operations", { body });
  expect(late.status).toBe(200);
  expect(late.body).toEqual({ created: false, operation: done.body.operation });

  for (const other of [
    { ...body, kind: "erase" },
    { ...body, filter: { tags: ["user:7"] } },
  ]) {
    const r = await t.api("POST", "/v1/operations", { body: other });
    expect(r.status, JSON.stringify(other)).toBe(409);
    expect(r.body).toMatchObject({
      error: { code: "key-conflict", field: "key" },
      outcome: "key-conflict",
      operation: { id },
    });
    expect(r.body.error.received).toContain("erase-request-42");
  }
  for (const key of ["", "k".repeat(257), 7]) {
    const r = await t.api("POST", "/v1/operations", { body: { ...body, key } });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("key");
  }
  expect(
    (await t.api("GET", "/v1/operations")).body.operations.map((o: { id: string }) => o.id),
  ).toEqual([id]);
  const theirs = await t.api("POST", "/v1/operations", { key: t.umbrella.key, body });
  expect(theirs.status).toBe(202);
  expect(theirs.body.operation.id).not.toBe(id);
});
