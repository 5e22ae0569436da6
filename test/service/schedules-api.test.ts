import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scheduleView } from "../../src/api/schedule-view.js";
import { ManualClock } from "../../src/core/clock.js";
import { startTestService, type ApiResult, type TestService } from "./helpers.js";

/**
 * Issue 12 §1 over HTTP: /v1/schedules on a real service (127.0.0.1, a fresh SQLite file)
 * whose clock is a ManualClock that never moves, so nothing fires while the routes are
 * exercised. Expected instants are written out by hand from the zone rules (Paris: UTC+1
 * until 2026-03-29 01:00Z, UTC+2 after), not computed by the code under test.
 */

let t: TestService;
const NOW = Date.UTC(2026, 2, 25, 12, 0, 0); // Wednesday 2026-03-25 13:00 in Paris
const TARGET = "https://hooks.example.com/series";
const WEEKDAYS_9 = { cron: "0 9 * * 1-5", timeZone: "Europe/Paris", target: TARGET };

beforeAll(async () => {
  t = await startTestService({
    clock: new ManualClock(NOW),
    scheduler: { maxIdleMs: 3_600_000, leaseSweepIntervalMs: 3_600_000 },
  });
});
afterAll(async () => {
  await t.close();
});

function expectError(r: ApiResult, status: number, field: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error.field).toBe(field);
  for (const k of ["code", "expected", "received", "message"]) {
    expect(typeof r.body.error[k]).toBe("string");
  }
}

async function create(body: Record<string, unknown> = WEEKDAYS_9): Promise<ApiResult> {
  const r = await t.api("POST", "/v1/schedules", { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r;
}

describe("POST /v1/schedules", () => {
  it("creates a series in its zone, with its next occurrence, ETag and Location", async () => {
    const r = await create({ ...WEEKDAYS_9, payload: { n: 1 }, headers: { "x-a": "1" } });
    const s = r.body.schedule;
    expect(r.body.created).toBe(true);
    expect(r.headers.get("etag")).toBe('"1"');
    expect(r.headers.get("location")).toBe(`/v1/schedules/${s.id}`);
    expect(s).toMatchObject({
      tenant: "acme",
      cron: "0 9 * * 1-5",
      rrule: null,
      timeZone: "Europe/Paris",
      state: "active",
      version: 1,
      payload: { n: 1 },
      headers: { "x-a": "1" },
      // Thursday 26 March 09:00 Paris, still UTC+1
      nextAt: "2026-03-26T08:00:00.000Z",
      nextAtLocal: "2026-03-26T09:00:00.000+01:00",
      nextNominal: "2026-03-26T09:00:00",
      lastOutcome: null,
    });
    expect(s.description).toContain("Europe/Paris");
    // the pending occurrence is a job of the tenant, carrying the series' id
    const job = await t.api("GET", `/v1/jobs/${s.nextJobId}`);
    expect(job.body.job).toMatchObject({ scheduleId: s.id, status: "pending", payload: { n: 1 } });
    // every field the OpenAPI document requires is sent
    const doc = (await t.api("GET", "/openapi.json", { key: null })).body;
    expect(Object.keys(s).sort()).toEqual([...doc.components.schemas.Schedule.required].sort());
  });

  it("an idempotency key returns the stored series: 200, created false", async () => {
    const first = await create({ ...WEEKDAYS_9, key: "standup" });
    const again = await t.api("POST", "/v1/schedules", {
      body: { ...WEEKDAYS_9, cron: "0 10 * * *", key: "standup" },
    });
    expect(again.status).toBe(200);
    expect(again.body.created).toBe(false);
    expect(again.body.schedule.id).toBe(first.body.schedule.id);
    expect(again.body.schedule.cron).toBe("0 9 * * 1-5");
  });

  it("refuses bad rules and fields naming cron, rrule, timeZone or the field", async () => {
    const before = (await t.api("GET", "/v1/schedules?limit=1000")).body.schedules.length;
    const bad: [Record<string, unknown>, string][] = [
      [{ ...WEEKDAYS_9, cron: "61 * * * *" }, "cron"],
      [{ ...WEEKDAYS_9, cron: "0 0 30 2 *" }, "cron"], // 30 February never comes
      [{ target: TARGET, rrule: "FREQ=SOMETIMES" }, "rrule"],
      [{ ...WEEKDAYS_9, timeZone: "Mars/Olympus" }, "timeZone"],
      [{ target: TARGET }, "cron"],
      [{ ...WEEKDAYS_9, target: "ftp://x.example/" }, "target"],
      [{ ...WEEKDAYS_9, headers: { "Duetime-Signature": "x" } }, "headers.Duetime-Signature"],
      [{ ...WEEKDAYS_9, misfire: "sometimes" }, "misfire"],
      [{ ...WEEKDAYS_9, gap: "jump" }, "gap"],
      [{ ...WEEKDAYS_9, count: 0 }, "count"],
      [{ ...WEEKDAYS_9, tenant: "umbrella" }, "tenant"],
      [{ ...WEEKDAYS_9, targetOptions: {} }, "targetOptions"],
      [{ ...WEEKDAYS_9, color: "red" }, "color"],
    ];
    for (const [body, field] of bad) {
      expectError(await t.api("POST", "/v1/schedules", { body }), 400, field);
    }
    expectError(await t.api("POST", "/v1/schedules", { body: [1] }), 400, "body");
    const after = (await t.api("GET", "/v1/schedules?limit=1000")).body.schedules.length;
    expect(after).toBe(before);
  });
});

describe("one series: read, change, pause, resume, skip, delete", () => {
  it("PATCH needs the current version when If-Match is sent (412 with the series as it is)", async () => {
    const s = (await create()).body.schedule;
    const stale = await t.api("PATCH", `/v1/schedules/${s.id}`, {
      body: { cron: "30 17 * * *" },
      headers: { "if-match": '"7"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({
      error: { code: "version-conflict", field: "if-match" },
      schedule: { id: s.id, version: 1, cron: "0 9 * * 1-5" },
    });
    expect(stale.headers.get("etag")).toBe('"1"');
    const r = await t.api("PATCH", `/v1/schedules/${s.id}`, {
      body: { cron: "30 17 * * *" },
      headers: { "if-match": '"1"' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.headers.get("etag")).toBe('"2"');
    expect(r.body.schedule).toMatchObject({
      version: 2,
      cron: "30 17 * * *",
      headers: null,
      nextAt: "2026-03-25T16:30:00.000Z", // today 17:30 Paris
    });
    // the replaced occurrence's job is cancelled, the new one pending
    expect((await t.api("GET", `/v1/jobs/${s.nextJobId}`)).body.job.status).toBe("cancelled");
    expectError(
      await t.api("PATCH", `/v1/schedules/${s.id}`, { body: { cron: "nope" } }),
      400,
      "cron",
    );
    expectError(
      await t.api("PATCH", `/v1/schedules/${s.id}`, { body: { key: "new" } }),
      400,
      "key",
    );
    expect((await t.api("GET", `/v1/schedules/${s.id}`)).body.schedule.version).toBe(2);
  });

  it("PATCH of headers keeps the target; of the target keeps the headers", async () => {
    const s = (await create({ ...WEEKDAYS_9, headers: { "x-a": "1" } })).body.schedule;
    const moved = await t.api("PATCH", `/v1/schedules/${s.id}`, {
      body: { target: "https://other.example.com/h" },
    });
    expect(moved.body.schedule).toMatchObject({
      target: "https://other.example.com/h",
      headers: { "x-a": "1" },
    });
    const cleared = await t.api("PATCH", `/v1/schedules/${s.id}`, { body: { headers: null } });
    expect(cleared.body.schedule).toMatchObject({
      target: "https://other.example.com/h",
      headers: null,
    });
    expectError(
      await t.api("PATCH", `/v1/schedules/${s.id}`, { body: { headers: { "a b": "c" } } }),
      400,
      "headers.a b",
    );
  });

  it("pause, resume and skip move the pending occurrence; delete cancels it", async () => {
    const s = (await create()).body.schedule;
    const paused = await t.api("POST", `/v1/schedules/${s.id}/pause`);
    expect(paused.body.schedule).toMatchObject({ state: "paused", nextAt: null, version: 2 });
    expect((await t.api("GET", `/v1/jobs/${s.nextJobId}`)).body.job.status).toBe("cancelled");
    const resumed = await t.api("POST", `/v1/schedules/${s.id}/resume`, { body: {} });
    expect(resumed.body.schedule).toMatchObject({
      state: "active",
      nextAt: "2026-03-26T08:00:00.000Z",
    });
    const skipped = await t.api("POST", `/v1/schedules/${s.id}/skip`);
    // Friday 27 March 09:00 Paris (UTC+1)
    expect(skipped.body.schedule.nextAt).toBe("2026-03-27T08:00:00.000Z");
    const again = await t.api("POST", `/v1/schedules/${s.id}/skip`);
    // the weekend passes and the clocks go forward on the 29th: Monday 30 March is UTC+2
    expect(again.body.schedule.nextAt).toBe("2026-03-30T07:00:00.000Z");
    // the preview starts at the pending occurrence: the skipped ones are not shown as coming
    const next = await t.api("GET", `/v1/schedules/${s.id}/next?count=2`);
    expect(next.body.occurrences.map((o: { at: string }) => o.at)).toEqual([
      "2026-03-30T07:00:00.000Z",
      "2026-03-31T07:00:00.000Z",
    ]);
    expectError(
      await t.api("POST", `/v1/schedules/${s.id}/pause`, { body: { now: true } }),
      400,
      "now",
    );
    const pending = again.body.schedule.nextJobId;
    const del = await t.api("DELETE", `/v1/schedules/${s.id}`, {
      headers: { "if-match": `"${again.body.schedule.version}"` },
    });
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(del.body).toMatchObject({ deleted: true, schedule: { id: s.id } });
    expect((await t.api("GET", `/v1/jobs/${pending}`)).body.job.status).toBe("cancelled");
    expectError(await t.api("GET", `/v1/schedules/${s.id}`), 404, "id");
  });

  it("POST /v1/jobs/{id}/cancel of the pending occurrence skips it; the series goes on", async () => {
    const s = (await create()).body.schedule;
    const r = await t.api("POST", `/v1/jobs/${s.nextJobId}/cancel`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.job).toMatchObject({ id: s.nextJobId, status: "cancelled" });
    const after = (await t.api("GET", `/v1/schedules/${s.id}`)).body.schedule;
    // Friday 27 March 09:00 Paris (UTC+1): the cancelled Thursday is skipped, not waited on
    expect(after).toMatchObject({
      state: "active",
      version: 2,
      nextAt: "2026-03-27T08:00:00.000Z",
    });
    expect(after.nextJobId).not.toBe(s.nextJobId);
    const next = (await t.api("GET", `/v1/jobs/${after.nextJobId}`)).body.job;
    expect(next).toMatchObject({ scheduleId: s.id, status: "pending" });
  });

  it("next?count=&from= previews a stored series across the DST change", async () => {
    const s = (await create({ ...WEEKDAYS_9, cron: "0 9 * * *" })).body.schedule;
    const r = await t.api("GET", `/v1/schedules/${s.id}/next?count=3&from=2026-03-27T12:00:00Z`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.timeZone).toBe("Europe/Paris");
    expect(r.body.occurrences).toEqual([
      {
        at: "2026-03-28T08:00:00.000Z",
        atLocal: "2026-03-28T09:00:00.000+01:00",
        nominal: "2026-03-28T09:00:00",
        mapping: "exact",
      },
      {
        at: "2026-03-29T07:00:00.000Z",
        atLocal: "2026-03-29T09:00:00.000+02:00",
        nominal: "2026-03-29T09:00:00",
        mapping: "exact",
      },
      {
        at: "2026-03-30T07:00:00.000Z",
        atLocal: "2026-03-30T09:00:00.000+02:00",
        nominal: "2026-03-30T09:00:00",
        mapping: "exact",
      },
    ]);
    expect((await t.api("GET", `/v1/schedules/${s.id}/next`)).body.occurrences).toHaveLength(10);
    expectError(await t.api("GET", `/v1/schedules/${s.id}/next?count=0`), 400, "count");
    expectError(await t.api("GET", `/v1/schedules/${s.id}/next?count=101`), 400, "count");
    expectError(await t.api("GET", `/v1/schedules/${s.id}/next?from=whenever`), 400, "from");
    expectError(await t.api("GET", `/v1/schedules/${s.id}/next?at=1`), 400, "at");
  });
});

describe("POST /v1/schedules/preview", () => {
  it("previews a rule not stored; a nonexistent local time is shifted by the gap", async () => {
    const r = await t.api("POST", "/v1/schedules/preview", {
      body: {
        cron: "30 2 * * *",
        timeZone: "Europe/Paris",
        from: "2026-03-28T12:00:00Z",
        count: 2,
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.occurrences).toEqual([
      {
        // 02:30 does not exist on the 29th (02:00 -> 03:00): shifted by the gap, 03:30 CEST
        at: "2026-03-29T01:30:00.000Z",
        atLocal: "2026-03-29T03:30:00.000+02:00",
        nominal: "2026-03-29T02:30:00",
        mapping: "gap-shifted",
      },
      {
        at: "2026-03-30T00:30:00.000Z",
        atLocal: "2026-03-30T02:30:00.000+02:00",
        nominal: "2026-03-30T02:30:00",
        mapping: "exact",
      },
    ]);
    const rrule = await t.api("POST", "/v1/schedules/preview", {
      body: { rrule: "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0", count: 1 },
    });
    expect(rrule.body).toMatchObject({
      timeZone: "UTC",
      occurrences: [{ at: "2026-03-30T09:00:00.000Z" }],
    });
    // nothing was stored by a preview
    const stored = (await t.api("GET", "/v1/schedules?limit=1000")).body.schedules;
    expect(stored.some((x: { cron: string }) => x.cron === "30 2 * * *")).toBe(false);
  });

  it("refuses what it cannot read, naming the field", async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ cron: "0 0 31 4 *" }, "cron"], // 31 April never comes
      [{ rrule: "FREQ=DAILY;BYHOUR=25" }, "rrule"],
      [{ cron: "0 9 * * *", timeZone: "Nowhere/Else" }, "timeZone"],
      [{ cron: "0 9 * * *", count: 1000 }, "count"],
      [{ cron: "0 9 * * *", from: "when pigs fly" }, "from"],
      [{ cron: "0 9 * * *", target: TARGET }, "target"],
      [{}, "cron"],
    ];
    for (const [body, field] of bad) {
      expectError(await t.api("POST", "/v1/schedules/preview", { body }), 400, field);
    }
  });
});

describe("tenant isolation", () => {
  it("another tenant's series answers 404 on every route and is not listed", async () => {
    const s = (await create({ ...WEEKDAYS_9, key: "acme-only" })).body.schedule;
    const key = t.umbrella.key;
    const tries: [string, string, unknown?][] = [
      ["GET", `/v1/schedules/${s.id}`],
      ["PATCH", `/v1/schedules/${s.id}`, { cron: "0 1 * * *" }],
      ["DELETE", `/v1/schedules/${s.id}`],
      ["POST", `/v1/schedules/${s.id}/pause`],
      ["POST", `/v1/schedules/${s.id}/resume`],
      ["POST", `/v1/schedules/${s.id}/skip`],
      ["GET", `/v1/schedules/${s.id}/next`],
    ];
    for (const [method, path, body] of tries) {
      const r = await t.api(method, path, { key, ...(body === undefined ? {} : { body }) });
      expectError(r, 404, "id");
      expect(r.body.error.code).toBe("not-found");
    }
    const listed = (await t.api("GET", "/v1/schedules", { key })).body.schedules;
    expect(listed.map((x: { id: string }) => x.id)).not.toContain(s.id);
    // the same key is the other tenant's own: a new series, not acme's
    const theirs = await t.api("POST", "/v1/schedules", {
      key,
      body: { ...WEEKDAYS_9, key: "acme-only" },
    });
    expect(theirs.status).toBe(201);
    expect(theirs.body.schedule.id).not.toBe(s.id);
    const mine = (await t.api("GET", `/v1/schedules/${s.id}`)).body.schedule;
    expect(mine).toEqual(scheduleView(await t.svc.scheduler.getSchedule(s.id).then((x) => x!)));
  });
});

describe("GET /v1/schedules", () => {
  it("pages in creation order and filters by state", async () => {
    const a = (await create()).body.schedule;
    await t.api("POST", `/v1/schedules/${a.id}/pause`);
    const paused = (await t.api("GET", "/v1/schedules?state=paused")).body.schedules;
    expect(paused.map((x: { id: string }) => x.id)).toContain(a.id);
    expect(paused.every((x: { state: string }) => x.state === "paused")).toBe(true);
    const p1 = (await t.api("GET", "/v1/schedules?limit=2")).body;
    expect(p1.schedules).toHaveLength(2);
    const p2 = (await t.api("GET", `/v1/schedules?limit=2&cursor=${p1.nextCursor}`)).body;
    expect(p2.schedules[0].id > p1.schedules[1].id).toBe(true);
    expectError(await t.api("GET", "/v1/schedules?state=sleeping"), 400, "state");
    expectError(await t.api("GET", "/v1/schedules?limit=0"), 400, "limit");
    expectError(await t.api("GET", "/v1/schedules?tenant=umbrella"), 400, "tenant");
  });
});
