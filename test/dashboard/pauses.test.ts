import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR, startDashboard, statusesWithoutKey, type Dashboard } from "./helpers.js";

/**
 * The pauses page's endpoints over real HTTP on loopback, on a real SQLite file: a pause made,
 * listed with the jobs it holds, resumed and given back, each within the key's tenant, and
 * bad input refused naming the field with nothing stored. The engine is not started: the
 * test runs the pause work itself (runPauseWork), so what the page reads is known at each step.
 */
describe("dashboard pauses", () => {
  let d: Dashboard;
  let mailJob: string;
  let globexMail: string;

  beforeAll(async () => {
    d = await startDashboard({ scheduler: { maxOpenPauses: 3 } });
    mailJob = (
      await d.scheduler.schedule({ tenant: "acme", dueAt: d.bucket0 + 7 * HOUR, target: "mail" })
    ).job.id;
    globexMail = (
      await d.scheduler.schedule({ tenant: "globex", dueAt: d.bucket0 + 7 * HOUR, target: "mail" })
    ).job.id;
  });
  afterAll(async () => {
    await d.stop();
  });

  const all = async (key = "key-acme") =>
    (await d.api("/v1/dashboard/pauses", { key })).body.pauses as {
      id: string;
      state: string;
      scope: { tag?: string };
    }[];

  it("answers 401 without a key on every pauses route", async () => {
    const routes = [
      ["GET", "/v1/dashboard/pauses"],
      ["POST", "/v1/dashboard/pauses"],
      ["POST", "/v1/dashboard/pauses/01JZZZZZZZZZZZZZZZZZZZZZZZ/resume"],
    ] as const;
    const statuses = await statusesWithoutKey(d, routes);
    expect(new Set(Object.values(statuses)), JSON.stringify(statuses)).toEqual(new Set([401]));
  });

  it("pauses a target, lists it with its held job, resumes it; the other tenant sees none of it", async () => {
    const made = await d.api("/v1/dashboard/pauses", {
      method: "POST",
      body: { scope: { target: "mail" }, onResume: "shift" },
    });
    expect(made.status).toBe(201);
    const pause = made.body.pause;
    expect(pause).toMatchObject({
      tenant: "acme",
      scope: { target: "mail" },
      description: "target mail",
      onResume: "shift",
      state: "active",
      resumedAt: null,
    });
    expect(pause.pausedAt).toBe(new Date(d.clock.now()).toISOString());

    await d.scheduler.runPauseWork();
    const listed = await d.api("/v1/dashboard/pauses");
    expect(listed.status).toBe(200);
    expect(listed.body.pauses).toMatchObject([{ id: pause.id, heldJobs: 1, holdComplete: true }]);
    expect((await d.scheduler.get(mailJob))!.pausedBy).toBe(pause.id);
    // globex's mail job is its own: not held, and globex sees no pause
    expect(await all("key-globex")).toEqual([]);
    expect((await d.scheduler.get(globexMail))!.pausedBy).toBeNull();

    const foreign = await d.api(`/v1/dashboard/pauses/${pause.id}/resume`, {
      method: "POST",
      body: {},
      key: "key-globex",
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toMatchObject({ code: "not-found", field: "id" });
    expect((await d.scheduler.getPause(pause.id))!.state).toBe("active");

    d.clock.set(d.clock.now() + 5 * 60_000);
    const resumed = await d.api(`/v1/dashboard/pauses/${pause.id}/resume`, {
      method: "POST",
      body: {},
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({
      pause: { id: pause.id, state: "resuming", description: "target mail" },
      releasing: { jobs: 1, onResume: "shift" },
    });
    await d.scheduler.runPauseWork();
    const after = await d.api("/v1/dashboard/pauses");
    expect(after.body.pauses).toMatchObject([{ id: pause.id, state: "resumed", heldJobs: 0 }]);
    expect(after.body.pauses[0].resumedAt).toBe(new Date(d.clock.now()).toISOString());
    expect((await d.scheduler.get(mailJob))!.pausedBy).toBeNull();
    const active = await d.api("/v1/dashboard/pauses?state=active");
    expect(active.body.pauses).toEqual([]);
  });

  it("refuses bad input with 400 naming the field, and stores nothing", async () => {
    const before = await all();
    for (const [body, field] of [
      [{}, "scope"],
      [{ scope: { target: "mail", tag: "x" } }, "scope"],
      [{ scope: { target: "" } }, "scope.target"],
      [{ scope: { tag: "x".repeat(65) } }, "scope.tag"],
      [{ scope: { tenant: "yes" } }, "scope.tenant"],
      [{ scope: { tenant: true }, onResume: "later" }, "onResume"],
      [{ scope: { tenant: true }, until: "tomorrow" }, "until"],
    ] as const) {
      const r = await d.api("/v1/dashboard/pauses", { method: "POST", body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.field, JSON.stringify(body)).toBe(field);
    }
    const text = await fetch(`${d.base}/v1/dashboard/pauses`, {
      method: "POST",
      headers: { authorization: "Bearer key-acme", "content-type": "text/plain" },
      body: '{"scope":{"tenant":true}}',
    });
    expect(text.status).toBe(415);
    const q = await d.api("/v1/dashboard/pauses?state=asleep");
    expect(q.status).toBe(400);
    expect(q.body.error.field).toBe("state");
    expect(await all()).toEqual(before);
  });

  it("answers a pause past the tenant's open pauses 429 naming the quota, as the API does", async () => {
    const open = (await d.scheduler.listPauses({ tenant: "acme" })).length;
    for (let i = open; i < 3; i++) {
      const r = await d.api("/v1/dashboard/pauses", {
        method: "POST",
        body: { scope: { tag: `t${i}` } },
      });
      expect(r.status).toBe(201);
    }
    const refused = await d.api("/v1/dashboard/pauses", {
      method: "POST",
      body: { scope: { tag: "one-too-many" } },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "quota-exceeded", field: "tenant" });
    expect(refused.body.quota).toBe("openPauses");
    expect(refused.headers.get("retry-after")).toBe("60");
    const tags = (await all()).map((p) => p.scope.tag);
    expect(tags).not.toContain("one-too-many");
  });

  it("lists pauses a page at a time: limit, then each nextCursor, until null, each pause once in creation order", async () => {
    const everyone = await all();
    expect(everyone.length).toBeGreaterThanOrEqual(4); // the resumed target pause and three tags
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < everyone.length + 1; pages++) {
      const r = await d.api(
        `/v1/dashboard/pauses?limit=2${cursor === null ? "" : `&cursor=${cursor}`}`,
      );
      expect(r.status).toBe(200);
      expect(r.body.pauses.length).toBeLessThanOrEqual(2);
      seen.push(...(r.body.pauses as { id: string }[]).map((p) => p.id));
      cursor = r.body.nextCursor as string | null;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(seen).toEqual(everyone.map((p) => p.id));
    for (const bad of ["limit=0", "limit=1001", "limit=ten"]) {
      const r = await d.api(`/v1/dashboard/pauses?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error.field, bad).toBe("limit");
    }
  });
});
