import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scheduleView } from "../../src/api/schedule-view.js";
import { createIdGenerator } from "../../src/core/ids.js";
import { dailySeries } from "../support/series.js";
import { startDashboard, statusesWithoutKey, type Dashboard } from "./helpers.js";

/**
 * The schedules page's data endpoints over real HTTP on loopback: series listed with the rule
 * in words, zone, state, next occurrences and the last occurrence's outcome; pause and resume
 * with the If-Match check of the job actions. Expected instants are written by hand: Paris is
 * UTC+1 in winter, UTC+2 in summer; New York UTC-5 in winter.
 */
describe("dashboard schedules", () => {
  let d: Dashboard;
  let weekdays: string;
  let everyMinute: string;
  let firstMinute: number;

  beforeAll(async () => {
    d = await startDashboard();
    const s = d.scheduler;
    weekdays = (
      await s.scheduleRecurring({
        tenant: "acme",
        rrule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0",
        timeZone: "Europe/Paris",
        target: "noop",
      })
    ).schedule.id;
    const h = await s.scheduleRecurring({
      tenant: "acme",
      cron: "* * * * *",
      timeZone: "America/New_York",
      target: "noop",
    });
    everyMinute = h.schedule.id;
    firstMinute = h.schedule.nextAt!;
    await s.scheduleRecurring({
      tenant: "globex",
      cron: "0 9 * * *",
      timeZone: "UTC",
      target: "noop",
    });
    // one occurrence of the every-minute series fires (the seed's handler "noop" succeeds)
    s.start();
    await d.clock.advanceTo(firstMinute);
    await s.idle();
    await s.stop();
  });
  afterAll(async () => {
    await d.stop();
  });

  it("answers 401 without a key on every schedules route", async () => {
    const routes = [
      ["GET", "/v1/dashboard/schedules"],
      ["GET", `/v1/dashboard/schedules/${weekdays}`],
      ["POST", `/v1/dashboard/schedules/${weekdays}/pause`],
      ["POST", `/v1/dashboard/schedules/${weekdays}/resume`],
    ] as const;
    const statuses = await statusesWithoutKey(d, routes);
    expect(new Set(Object.values(statuses)), JSON.stringify(statuses)).toEqual(new Set([401]));
  });

  it("lists the tenant's series: rule in words, zone, state, next occurrences, last outcome", async () => {
    const r = await d.api("/v1/dashboard/schedules");
    expect(r.status).toBe(200);
    expect(r.body.nextCursor).toBeNull();
    const rows = r.body.schedules as {
      id: string;
      description: string;
      timeZone: string;
      state: string;
      rrule: string | null;
      cron: string | null;
      nextOccurrences: { at: string; atLocal: string }[];
      lastOutcome: { jobId: string; status: string } | null;
      firedCount: number;
    }[];
    // globex's series is not acme's to see
    expect(rows.map((x) => x.id)).toEqual([weekdays, everyMinute]);
    const [w, h] = rows as [(typeof rows)[0], (typeof rows)[0]];
    expect(w).toMatchObject({
      description: "every weekday at 09:00 (Europe/Paris)",
      timeZone: "Europe/Paris",
      state: "active",
      cron: null,
      lastOutcome: null,
      firedCount: 0,
    });
    expect(w.nextOccurrences).toHaveLength(5);
    // each is 09:00 Paris on a weekday, one a day apart or over a weekend
    for (const o of w.nextOccurrences) {
      expect(o.atLocal).toMatch(/T09:00:00\.000\+0[12]:00$/);
      const day = new Date(o.at).getUTCDay();
      expect(day >= 1 && day <= 5, o.at).toBe(true);
    }
    expect(h.cron).toBe("* * * * *");
    expect(h.description).toMatch(/\(America\/New_York\)$/);
    expect(h.firedCount).toBe(1);
    expect(h.lastOutcome).toMatchObject({ status: "succeeded" });
    expect(h.nextOccurrences.map((o) => Date.parse(o.at) - firstMinute)).toEqual([
      60_000, 120_000, 180_000, 240_000, 300_000,
    ]);

    expect((await d.api("/v1/dashboard/schedules?state=paused")).body.schedules).toEqual([]);
    const bad = await d.api("/v1/dashboard/schedules?state=asleep");
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("state");
    const page = await d.api("/v1/dashboard/schedules?limit=1");
    expect(page.body.schedules.map((x: { id: string }) => x.id)).toEqual([weekdays]);
    const next = await d.api(`/v1/dashboard/schedules?limit=1&cursor=${page.body.nextCursor}`);
    expect(next.body.schedules.map((x: { id: string }) => x.id)).toEqual([everyMinute]);
  });

  it("pauses and resumes with If-Match: 412 on a stale version, 404 for another tenant's", async () => {
    const shown = await d.api(`/v1/dashboard/schedules/${weekdays}`);
    expect(shown.status).toBe(200);
    const version = shown.body.schedule.version as number;
    expect(shown.headers.get("etag")).toBe(`"${version}"`);
    const pendingJob = shown.body.schedule.nextJobId as string;

    const paused = await d.api(`/v1/dashboard/schedules/${weekdays}/pause`, {
      method: "POST",
      body: {},
      headers: { "if-match": `"${version}"` },
    });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      outcome: "paused",
      schedule: { state: "paused", version: version + 1, nextOccurrences: [], nextJobId: null },
    });
    // its pending occurrence is cancelled, so nothing fires while paused
    expect((await d.scheduler.get(pendingJob))?.status).toBe("cancelled");

    // resuming with the version the page showed before the pause is refused, nothing changes
    const stale = await d.api(`/v1/dashboard/schedules/${weekdays}/resume`, {
      method: "POST",
      body: {},
      headers: { "if-match": `"${version}"` },
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({
      error: { code: "version-conflict", field: "if-match" },
      outcome: "version-conflict",
      schedule: { state: "paused", version: version + 1 },
    });
    expect((await d.scheduler.getSchedule(weekdays))?.state).toBe("paused");

    const badTag = await d.api(`/v1/dashboard/schedules/${weekdays}/resume`, {
      method: "POST",
      body: {},
      headers: { "if-match": "yesterday" },
    });
    expect(badTag.status).toBe(400);
    expect(badTag.body.error.field).toBe("if-match");

    const resumed = await d.api(`/v1/dashboard/schedules/${weekdays}/resume`, {
      method: "POST",
      body: {},
      headers: { "if-match": `"${version + 1}"` },
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.schedule).toMatchObject({ state: "active", version: version + 2 });
    expect(resumed.body.schedule.nextOccurrences).toHaveLength(5);

    for (const path of [
      `/v1/dashboard/schedules/${weekdays}`,
      `/v1/dashboard/schedules/${weekdays}/pause`,
    ]) {
      const r = await d.api(path, {
        key: "key-globex",
        ...(path.endsWith("pause") ? { method: "POST", body: {} } : {}),
      });
      expect(r.status, path).toBe(404);
      expect(r.body.error).toMatchObject({ code: "not-found", field: "id" });
    }
    expect((await d.scheduler.getSchedule(weekdays))?.state).toBe("active");
  });

  it("shows each series as the API's view of it, one a claim ended for a rule that no longer compiles too", async () => {
    // written by an older version (or corrupted): the claim ended it with the reason
    const broken = dailySeries(createIdGenerator(() => d.clock.now())(), d.clock.now(), {
      tenant: "acme",
      rule: { cron: "61 9 * * *" },
      state: "ended",
      endedReason: "the series could not be advanced: cron field minute out of range",
    });
    await d.store.schedulesInsert({ schedule: broken, job: null, now: d.clock.now() });
    for (const id of [weekdays, broken.id]) {
      const r = await d.api(`/v1/dashboard/schedules/${id}`);
      expect(r.status, id).toBe(200);
      const { nextOccurrences, ...view } = r.body.schedule as Record<string, unknown>;
      expect(view).toEqual(scheduleView((await d.scheduler.getSchedule(id))!));
      expect(nextOccurrences).toHaveLength(id === weekdays ? 5 : 0);
    }
    const rows = (await d.api("/v1/dashboard/schedules?state=ended")).body.schedules;
    expect(rows).toMatchObject([{ id: broken.id, description: 'cron "61 9 * * *"' }]);
  });
});
