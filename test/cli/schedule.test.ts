import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../service/helpers.js";
import { cli, cliJson, ensureBuilt, tempWorkspace } from "./helpers.js";

/**
 * Issue 12 §1 on the CLI: `duetime schedule add|list|show|next|pause|resume|rm` on a local
 * SQLite file and against a real service (--url), each with --json printing the one schedule
 * view. The series start in 2030 so the instants are fixed; they are written out by hand
 * from the Paris rules (UTC+1, UTC+2 from 2030-03-31 01:00Z).
 */

interface View {
  id: string;
  state: string;
  cron: string | null;
  nextAt: string | null;
  nextAtLocal: string | null;
  key: string | null;
}

beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

const DAILY_9 = ["--cron", "0 9 * * *", "--tz", "Europe/Paris", "--start", "2030-03-30T00:00:00Z"];

describe("duetime schedule on a local database", () => {
  it("adds, lists, shows, previews, pauses, resumes and removes a series", async () => {
    const db = ["--db", ws.db];
    const add = await cliJson<{ created: boolean; schedule: View }>([
      "schedule",
      "add",
      ...db,
      ...DAILY_9,
      "--target",
      "standup",
      "--key",
      "standup",
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.body.created).toBe(true);
    const s = add.body.schedule;
    expect(s).toMatchObject({
      cron: "0 9 * * *",
      state: "active",
      nextAt: "2030-03-30T08:00:00.000Z",
      nextAtLocal: "2030-03-30T09:00:00.000+01:00",
    });
    const again = await cliJson<{ created: boolean; schedule: View }>([
      "schedule",
      "add",
      ...db,
      ...DAILY_9,
      "--target",
      "standup",
      "--key",
      "standup",
    ]);
    expect([again.body.created, again.body.schedule.id]).toEqual([false, s.id]);

    const list = await cliJson<{ schedules: View[] }>(["schedule", "list", ...db]);
    expect(list.body.schedules.map((x) => x.id)).toEqual([s.id]);
    const text = await cli(["schedule", "show", s.id, ...db]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("2030-03-30T09:00:00.000+01:00");
    expect(text.stdout).toContain("Europe/Paris");

    const next = await cliJson<{ occurrences: { at: string }[] }>([
      "schedule",
      "next",
      s.id,
      "--count",
      "2",
      ...db,
    ]);
    // across the change on the 31st: 09:00 is 08:00Z, then 07:00Z
    expect(next.body.occurrences.map((o) => o.at)).toEqual([
      "2030-03-30T08:00:00.000Z",
      "2030-03-31T07:00:00.000Z",
    ]);

    const paused = await cliJson<{ schedule: View }>(["schedule", "pause", s.id, ...db]);
    expect(paused.body.schedule).toMatchObject({ state: "paused", nextAt: null });
    const resumed = await cliJson<{ schedule: View }>(["schedule", "resume", s.id, ...db]);
    expect(resumed.body.schedule.state).toBe("active");
    const rm = await cliJson<{ outcome: string }>(["schedule", "rm", s.id, ...db]);
    expect(rm.body.outcome).toBe("deleted");
    const gone = await cli(["schedule", "show", s.id, ...db]);
    expect(gone.code).toBe(3);
    expect(gone.stdout).toContain("not-found");
  });

  it("previews a rule not stored, and refuses bad rules naming the flag", async () => {
    const r = await cliJson<{ timeZone: string; occurrences: { at: string; mapping: string }[] }>([
      "schedule",
      "next",
      "--cron",
      "30 2 * * *",
      "--tz",
      "Europe/Paris",
      "--from",
      "2030-03-30T12:00:00Z",
      "--count",
      "2",
    ]);
    expect(r.code, r.stderr).toBe(0);
    // 02:30 does not exist on the 31st: shifted by the gap to 03:30 CEST
    expect(r.body.occurrences).toMatchObject([
      { at: "2030-03-31T01:30:00.000Z", mapping: "gap-shifted" },
      { at: "2030-04-01T00:30:00.000Z", mapping: "exact" },
    ]);
    const bad = await cli([
      "schedule",
      "add",
      "--db",
      ws.db,
      "--cron",
      "61 * * * *",
      "--target",
      "x",
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --cron: expected/);
    const zone = await cli(["schedule", "next", "--rrule", "FREQ=DAILY", "--tz", "Mars/Base"]);
    expect(zone.code).toBe(2);
    expect(zone.stderr).toContain("--tz");
    const neither = await cli(["schedule", "next"]);
    expect(neither.code).toBe(2);
  });
});

describe("duetime schedule --url", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t.close();
  });

  it("works against a server with the same views, scoped to the key's tenant", async () => {
    const remote = ["--url", t.svc.url, "--api-key", t.acme.key];
    const add = await cliJson<{ created: boolean; schedule: View }>([
      "schedule",
      "add",
      ...remote,
      ...DAILY_9,
      "--target",
      "https://hooks.example.com/standup",
      "--header",
      "x-team:blue",
    ]);
    expect(add.code, add.stderr).toBe(0);
    const id = add.body.schedule.id;
    expect(add.body.schedule.nextAt).toBe("2030-03-30T08:00:00.000Z");
    const shown = await cliJson<View>(["schedule", "show", id, ...remote]);
    expect(shown.body).toEqual(
      (await t.api("GET", `/v1/schedules/${id}`)).body.schedule as unknown as View,
    );
    const paused = await cliJson<{ schedule: View }>(["schedule", "pause", id, ...remote]);
    expect(paused.body.schedule.state).toBe("paused");
    const other = await cli([
      "schedule",
      "show",
      id,
      "--url",
      t.svc.url,
      "--api-key",
      t.umbrella.key,
    ]);
    expect(other.code).toBe(3);
    const tenant = await cli(["schedule", "list", ...remote, "--tenant", "acme"]);
    expect(tenant.code).toBe(2);
    expect((await cli(["schedule", "rm", id, ...remote])).code).toBe(0);
  });
});
