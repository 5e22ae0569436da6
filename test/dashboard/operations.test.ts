import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR, startDashboard, statusesWithoutKey, type Dashboard } from "./helpers.js";

/**
 * The jobs page's tag filter and the bulk operations page's endpoints over real HTTP on
 * loopback, on a real SQLite file: jobs listed by tag from the tag index, an operation
 * counted, started, followed to its end and cancelled, each within the key's tenant. The
 * engine is not started: the test runs an operation's batches itself (runOperation), so
 * what the page polls is known at every step.
 */
describe("dashboard tags and bulk operations", () => {
  let d: Dashboard;
  const tagged: string[] = [];
  let both: string;

  beforeAll(async () => {
    d = await startDashboard();
    const s = d.scheduler;
    for (let i = 0; i < 5; i++) {
      const { job } = await s.schedule({
        tenant: "acme",
        dueAt: d.bucket0 + (10 + i) * HOUR,
        target: "noop",
        key: `reminder-${i}`,
        tags: ["user:42"],
      });
      tagged.push(job.id);
    }
    both = (
      await s.schedule({
        tenant: "acme",
        dueAt: d.bucket0 + 20 * HOUR,
        target: "noop",
        tags: ["user:42", "campaign:spring"],
      })
    ).job.id;
    tagged.push(both);
    await s.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 11 * HOUR,
      target: "noop",
      tags: ["user:7"],
    });
    await s.schedule({
      tenant: "globex",
      dueAt: d.bucket0 + 11 * HOUR,
      target: "noop",
      tags: ["user:42"],
    });
  });
  afterAll(async () => {
    await d.stop();
  });

  it("answers 401 without a key on every operations route", async () => {
    const routes = [
      ["POST", "/v1/dashboard/operations"],
      ["GET", "/v1/dashboard/operations"],
      ["GET", "/v1/dashboard/operations/01JZZZZZZZZZZZZZZZZZZZZZZZ"],
      ["POST", "/v1/dashboard/operations/01JZZZZZZZZZZZZZZZZZZZZZZZ/cancel"],
    ] as const;
    const statuses = await statusesWithoutKey(d, routes);
    expect(new Set(Object.values(statuses)), JSON.stringify(statuses)).toEqual(new Set([401]));
  });

  it("lists the tenant's jobs carrying a tag, with their tags, by status and in pages", async () => {
    const r = await d.api("/v1/dashboard/jobs?tag=user:42");
    expect(r.status).toBe(200);
    expect(r.body.jobs.map((j: { id: string }) => j.id)).toEqual(tagged);
    expect(r.body.jobs.at(-1).tags).toEqual(["user:42", "campaign:spring"]);
    const spring = await d.api("/v1/dashboard/jobs?tag=campaign:spring");
    expect(spring.body.jobs.map((j: { id: string }) => j.id)).toEqual([both]);
    // the other tenant's job with the same tag stays its own
    const globex = await d.api("/v1/dashboard/jobs?tag=user:42", { key: "key-globex" });
    expect(globex.body.jobs).toHaveLength(1);
    expect(globex.body.jobs[0].tenant).toBe("globex");

    const first = await d.api("/v1/dashboard/jobs?tag=user:42&status=pending&limit=4");
    expect(first.body.jobs.map((j: { id: string }) => j.id)).toEqual(tagged.slice(0, 4));
    const next = await d.api(
      `/v1/dashboard/jobs?tag=user:42&status=pending&limit=4&cursor=${first.body.nextCursor}`,
    );
    expect(next.body.jobs.map((j: { id: string }) => j.id)).toEqual(tagged.slice(4));
    expect((await d.api("/v1/dashboard/jobs?tag=user:42&status=dead")).body.jobs).toEqual([]);
    const long = await d.api(`/v1/dashboard/jobs?tag=${"x".repeat(65)}`);
    expect(long.status).toBe(400);
    expect(long.body.error.field).toBe("tag");
  });

  it("counts, starts, follows and finishes a bulk cancel by tag; the other jobs stay", async () => {
    const filter = { tags: ["user:42"], status: ["pending"] };
    const counted = await d.api("/v1/dashboard/operations", {
      method: "POST",
      body: { kind: "count", of: "cancel", filter },
    });
    expect(counted.status).toBe(200);
    expect(counted.body.operation).toMatchObject({ kind: "count", of: "cancel", state: "done" });
    expect(counted.body.operation.changed).toBe(6);

    const started = await d.api("/v1/dashboard/operations", {
      method: "POST",
      body: { kind: "cancel", filter },
    });
    expect(started.status).toBe(202);
    const op = started.body.operation;
    expect(op).toMatchObject({ kind: "cancel", state: "queued", changed: 0, filter });
    const polled = await d.api(`/v1/dashboard/operations/${op.id}`);
    expect(polled.body.operation.state).toBe("queued");

    await d.scheduler.runOperation(op.id);
    const done = await d.api(`/v1/dashboard/operations/${op.id}`);
    expect(done.body.operation).toMatchObject({ state: "done", changed: 6 });
    for (const id of tagged) expect((await d.scheduler.get(id))!.status).toBe("cancelled");
    const untouched = await d.api("/v1/dashboard/jobs?tag=user:7");
    expect(untouched.body.jobs[0].status).toBe("pending");
    const globex = await d.api("/v1/dashboard/jobs?tag=user:42", { key: "key-globex" });
    expect(globex.body.jobs[0].status).toBe("pending");

    // newest first, the other tenant sees none of them and cannot read or cancel one
    const recent = await d.api("/v1/dashboard/operations");
    expect(recent.body.operations.map((o: { id: string }) => o.id).slice(0, 2)).toEqual([
      op.id,
      counted.body.operation.id,
    ]);
    expect(
      (await d.api("/v1/dashboard/operations", { key: "key-globex" })).body.operations,
    ).toEqual([]);
    expect((await d.api(`/v1/dashboard/operations/${op.id}`, { key: "key-globex" })).status).toBe(
      404,
    );
    const foreign = await d.api(`/v1/dashboard/operations/${op.id}/cancel`, {
      method: "POST",
      body: {},
      key: "key-globex",
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.field).toBe("id");
  });

  it("cancels a queued operation: no batch runs after it", async () => {
    const target = (
      await d.scheduler.schedule({
        tenant: "acme",
        dueAt: d.bucket0 + 30 * HOUR,
        target: "noop",
        tags: ["stop-me"],
      })
    ).job;
    const started = await d.api("/v1/dashboard/operations", {
      method: "POST",
      body: { kind: "cancel", filter: { tags: ["stop-me"] } },
    });
    const id = started.body.operation.id as string;
    const stopped = await d.api(`/v1/dashboard/operations/${id}/cancel`, {
      method: "POST",
      body: {},
    });
    expect(stopped.status).toBe(200);
    expect(stopped.body.operation.state).toBe("cancelled");
    await d.scheduler.runOperation(id);
    expect((await d.scheduler.get(target.id))!.status).toBe("pending");
    const cancelled = await d.api("/v1/dashboard/operations?state=cancelled");
    expect(cancelled.body.operations.map((o: { id: string }) => o.id)).toEqual([id]);
  });

  it("refuses bad input with 400 naming the field, and stores nothing", async () => {
    const before = (await d.api("/v1/dashboard/operations?limit=1000")).body.operations.length;
    for (const [body, field] of [
      [{ kind: "cancel", filter: {} }, "filter"],
      [{ kind: "explode", filter: { tags: ["user:42"] } }, "kind"],
      [{ kind: "cancel", filter: { tags: ["user:42"], status: "asleep" } }, "filter.status[0]"],
      [{ kind: "reschedule", filter: { tags: ["user:42"] } }, "dueAt"],
    ] as const) {
      const r = await d.api("/v1/dashboard/operations", { method: "POST", body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.field, JSON.stringify(body)).toBe(field);
    }
    const q = await d.api("/v1/dashboard/operations?state=asleep");
    expect(q.status).toBe(400);
    expect(q.body.error.field).toBe("state");
    const after = (await d.api("/v1/dashboard/operations?limit=1000")).body.operations.length;
    expect(after).toBe(before);
  });
});
