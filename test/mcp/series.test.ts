import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerMcpTargets } from "../../src/mcp/reminders.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { makeHarness } from "../support/harness.js";
import { dailySeries } from "../support/series.js";
import { call, callTask } from "./helpers.js";

/**
 * Recurring series through the task tools (issue 12 §1): the official SDK client connected
 * to the MCP server over the SDK's in-memory transport, on a scheduler whose clock is a
 * ManualClock and whose store is a fresh SQLite file. Expected instants are written out by
 * hand from the zones' rules (Paris is UTC+1 until 2026-03-29, then UTC+2).
 */

/** Monday 2026-03-02, 07:00 in Paris. */
const T0 = Date.UTC(2026, 2, 2, 6, 0, 0);
const iso = (ms: number): string => new Date(ms).toISOString();

interface SeriesShape {
  series_id: string;
  id: string;
  state: string;
  recurrence: string;
  recurrence_text: string;
  timezone: string;
  next_occurrences: { at: string; at_local: string }[];
  next_job_id: string | null;
  fired_count: number;
  last_outcome: { job_id: string; status: string } | null;
  version: number;
}

let h: ReturnType<typeof makeHarness>;
let client: Client;
const clients: Client[] = [];

async function connect(tenant: string): Promise<Client> {
  const server = createMcpServer({ scheduler: h.scheduler, tenant });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const c = new Client({ name: `series-test-${tenant}`, version: "1.0.0" });
  await c.connect(clientSide);
  clients.push(c);
  return c;
}

beforeEach(async () => {
  h = makeHarness({ start: T0, maxIdleMs: 3_600_000, leaseSweepIntervalMs: 3_600_000 });
  registerMcpTargets(h.scheduler);
  client = await connect("tenant-a");
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await h.close();
});

async function createSeries(args: Record<string, unknown>): Promise<SeriesShape> {
  const r = await call(client, "task.create", { description: "standup", ...args });
  if (r.isError) throw new Error(`task.create failed: ${r.text}`);
  expect(r.structured.outcome).toBe("created");
  return r.structured.series as SeriesShape;
}

async function status(id: string): Promise<SeriesShape> {
  const r = await call(client, "task.status", { job_id: id });
  if (r.isError) throw new Error(`task.status failed: ${r.text}`);
  return r.structured.series as SeriesShape;
}

describe("task tools on recurring series", () => {
  it("creates a series from English and from cron, lists both with their rule in words", async () => {
    const weekdays = await createSeries({
      recurrence: "every weekday at 9am",
      timezone: "Europe/Paris",
    });
    expect(weekdays).toMatchObject({
      state: "active",
      recurrence: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0",
      recurrence_text: "every weekday at 09:00 (Europe/Paris)",
      timezone: "Europe/Paris",
      fired_count: 0,
      last_outcome: null,
      version: 1,
    });
    expect(weekdays.next_occurrences).toEqual([
      { at: "2026-03-02T08:00:00.000Z", at_local: "2026-03-02T09:00:00.000+01:00" },
      { at: "2026-03-03T08:00:00.000Z", at_local: "2026-03-03T09:00:00.000+01:00" },
      { at: "2026-03-04T08:00:00.000Z", at_local: "2026-03-04T09:00:00.000+01:00" },
    ]);
    // every other Monday, across the change to summer time on 2026-03-29: 17:30 stays 17:30
    const fortnightly = await createSeries({
      recurrence: "every 2 weeks on monday at 17:30",
      timezone: "Europe/Paris",
    });
    expect(fortnightly.next_occurrences.map((o) => o.at_local)).toEqual([
      "2026-03-02T17:30:00.000+01:00",
      "2026-03-16T17:30:00.000+01:00",
      "2026-03-30T17:30:00.000+02:00",
    ]);
    const cron = await createSeries({ recurrence: "0 9 * * 1-5", timezone: "America/New_York" });
    expect(cron.recurrence).toBe("0 9 * * 1-5");
    expect(cron.recurrence_text).toMatch(/09:00 \(America\/New_York\)$/);
    // New York is UTC-5 until 2026-03-08
    expect(cron.next_occurrences[0]).toEqual({
      at: "2026-03-02T14:00:00.000Z",
      at_local: "2026-03-02T09:00:00.000-05:00",
    });

    const listed = await call(client, "task.list", {});
    expect(listed.isError).toBe(false);
    const series = listed.structured.series as SeriesShape[];
    expect(series.map((s) => s.id)).toEqual([weekdays.id, fortnightly.id, cron.id]);
    expect(listed.structured.series_next_cursor).toBeNull();
    expect(listed.text).toMatch(/^3 task\(s\) in due order; 3 recurring series\n/);
    // each series' pending occurrence is a task of its own, naming its series
    const tasks = listed.structured.tasks as { id: string; series_id: string | null }[];
    expect(tasks.map((t) => [t.id, t.series_id])).toEqual([
      [weekdays.next_job_id, weekdays.id],
      [cron.next_job_id, cron.id],
      [fortnightly.next_job_id, fortnightly.id],
    ]);
    // pages of series by series_cursor
    const page1 = await call(client, "task.list", { limit: 2 });
    const cursor = page1.structured.series_next_cursor as string;
    expect((page1.structured.series as SeriesShape[]).length).toBe(2);
    const page2 = await call(client, "task.list", { limit: 2, series_cursor: cursor });
    expect((page2.structured.series as SeriesShape[]).map((s) => s.id)).toEqual([cron.id]);
  });

  it("shows a series' status, reschedules it by time and by rule, and cancel ends it", async () => {
    const s = await createSeries({ recurrence: "every weekday at 9am", timezone: "Europe/Paris" });
    const shown = await call(client, "task.status", { job_id: s.id });
    expect(shown.text.split("\n")[0]).toBe(
      `active: series ${s.id} "standup" fires every weekday at 09:00 (Europe/Paris); ` +
        `next 2026-03-02T09:00:00.000+01:00 (task ${s.next_job_id}); fired 0 time(s)`,
    );
    expect((await status(s.id)).next_job_id).toBe(s.next_job_id);
    // another tenant's series reads as missing to every tool, and is left as it was
    const other = await connect("tenant-b");
    for (const [tool, args] of [
      ["task.status", { job_id: s.id }],
      ["task.cancel", { job_id: s.id }],
      ["task.reschedule", { job_id: s.id, recurrence: "every day at 8" }],
    ] as const) {
      const r = await call(other, tool, args);
      expect(r.text, tool).toBe(`not-found: no task ${s.id} (task not found)`);
    }
    expect((await call(other, "task.list", {})).structured.series).toEqual([]);
    expect((await status(s.id)).version).toBe(1);

    // scheduled_at restarts the series from that time: a Tuesday's wall time in Paris
    const moved = await call(client, "task.reschedule", {
      job_id: s.id,
      scheduled_at: "2026-03-10T00:00:00",
      expected_version: 1,
    });
    expect(moved.isError).toBe(false);
    const afterMove = moved.structured.series as SeriesShape;
    expect(afterMove.version).toBe(2);
    expect(afterMove.next_occurrences[0]!.at_local).toBe("2026-03-10T09:00:00.000+01:00");
    // the occurrence it replaced is cancelled, not left to fire
    expect((await callTask(client, "task.status", { job_id: s.next_job_id })).status).toBe(
      "cancelled",
    );

    const stale = await call(client, "task.reschedule", {
      id: s.id,
      recurrence: "every day at 8",
      expected_version: 1,
    });
    expect(stale.isError).toBe(true);
    expect(stale.structured).toMatchObject({ outcome: "version-conflict" });

    const rule = await call(client, "task.reschedule", {
      id: s.id,
      recurrence: "every day at 8",
    });
    expect(rule.isError).toBe(false);
    expect(rule.structured.series).toMatchObject({
      recurrence_text: "every day at 08:00 (Europe/Paris)",
      version: 3,
    });
    // the restart time stays: the first 08:00 at or after 2026-03-10T00:00 Paris
    expect((rule.structured.series as SeriesShape).next_occurrences[0]!.at_local).toBe(
      "2026-03-10T08:00:00.000+01:00",
    );
    const pending = (rule.structured.series as SeriesShape).next_job_id!;

    const cancelled = await call(client, "task.cancel", { job_id: s.id });
    expect(cancelled.isError).toBe(false);
    expect(cancelled.text).toMatch(
      new RegExp(`^cancelled: series ${s.id} is ended and deleted.*task ${pending}`),
    );
    expect(cancelled.structured).toMatchObject({ outcome: "cancelled" });
    expect((await callTask(client, "task.status", { job_id: pending })).status).toBe("cancelled");
    const gone = await call(client, "task.status", { job_id: s.id });
    expect(gone.isError).toBe(true);
    expect(gone.text).toBe(`not-found: no task ${s.id} (task not found)`);
    expect((await call(client, "task.cancel", { job_id: s.id })).structured).toMatchObject({
      outcome: "not-found",
    });
  });

  it("refuses recurrence it cannot read naming the field, with examples that work", async () => {
    const blue = await call(client, "task.create", {
      description: "x",
      recurrence: "every other blue moon",
      timezone: "Europe/Paris",
    });
    expect(blue.isError).toBe(true);
    expect(blue.structured).toMatchObject({ error: "invalid-input", field: "recurrence" });
    expect(blue.text).toMatch(
      /^recurrence: expected an English recurrence such as .*"every weekday at 9am"/,
    );
    // a cron expression that does not compile is refused as cron, never read as something else
    const badCron = await call(client, "task.create", {
      description: "x",
      recurrence: "61 9 * * *",
    });
    expect(badCron.structured).toMatchObject({ error: "invalid-input", field: "recurrence" });
    expect(badCron.text).toMatch(
      /rules that work: "every weekday at 9am" \(English\), "0 9 \* \* 1-5" \(cron\)/,
    );
    const never = await call(client, "task.create", { description: "x", recurrence: "0 0 30 2 *" });
    expect(never.structured).toMatchObject({ error: "invalid-input", field: "recurrence" });
    expect(never.text).toMatch(/^recurrence: expected a rule that matches at least one date/);
    const badRrule = await call(client, "task.create", {
      description: "x",
      recurrence: "FREQ=SOMETIMES",
    });
    expect(badRrule.structured).toMatchObject({ error: "invalid-input", field: "recurrence" });
    // one-shot options are refused beside recurrence, not dropped
    const keyMode = await call(client, "task.create", {
      description: "x",
      recurrence: "every day at 8",
      idempotency_key: "k",
      key_mode: "replace",
    });
    expect(keyMode.structured).toMatchObject({ field: "key_mode" });
    // neither a time nor a rule
    const none = await call(client, "task.create", { description: "x" });
    expect(none.structured).toMatchObject({ field: "scheduled_at" });
    // nothing was written by any of them
    expect((await h.scheduler.listSchedules()).schedules).toEqual([]);
    expect((await h.scheduler.list({})).jobs).toEqual([]);

    // every example the refusal shows works
    const examples = [...blue.text.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const recurrence of examples.slice(0, -1)) {
      const s = await createSeries({ recurrence, timezone: "Europe/Paris" });
      expect(s.state, recurrence).toBe("active");
    }
  });

  it("fires an occurrence on time, writes the next, and status shows it; cancelling one occurrence skips only it", async () => {
    h.scheduler.start();
    const s = await createSeries({ recurrence: "every day at 9am", timezone: "Europe/Paris" });
    const first = Date.UTC(2026, 2, 2, 8, 0, 0);
    expect(s.next_occurrences[0]!.at).toBe(iso(first));
    await h.clock.advanceTo(first - 1);
    await h.clock.advanceTo(first);
    await h.scheduler.idle();

    const after = await status(s.id);
    expect(after).toMatchObject({
      fired_count: 1,
      last_outcome: { job_id: s.next_job_id, status: "succeeded" },
    });
    expect(after.next_occurrences[0]!.at_local).toBe("2026-03-03T09:00:00.000+01:00");
    expect(after.next_job_id).not.toBe(s.next_job_id);
    const fired = await callTask(client, "task.status", { job_id: s.next_job_id });
    expect(fired).toMatchObject({
      status: "succeeded",
      fired_at: iso(first),
      last_result: { reminded: true, description: "standup" },
    });
    const shown = await call(client, "task.status", { job_id: s.id });
    expect(shown.text).toMatch(
      new RegExp(`fired 1 time\\(s\\); last occurrence succeeded \\(task ${s.next_job_id}\\)`),
    );

    // cancelling the pending occurrence as a task skips it; the series goes on after it
    const skipped = await call(client, "task.cancel", { job_id: after.next_job_id });
    expect(skipped.isError).toBe(false);
    expect(skipped.text).toMatch(/^cancelled: this occurrence of series .* only/);
    const goesOn = await status(s.id);
    expect(goesOn.state).toBe("active");
    expect(goesOn.next_occurrences[0]!.at_local).toBe("2026-03-04T09:00:00.000+01:00");
    expect(goesOn.next_job_id).not.toBe(after.next_job_id);
  });

  it("shows a series a claim ended for a rule that no longer compiles, its rule as text", async () => {
    // written by an older version (or corrupted): the claim ended it with the reason
    const broken = dailySeries("01KBROKENSERIES0000000000", T0, {
      tenant: "tenant-a",
      rule: { cron: "61 9 * * *" },
      state: "ended",
      endedReason: "the series could not be advanced: cron field minute out of range",
    });
    await h.store.schedulesInsert({ schedule: broken, job: null, now: T0 });
    const shown = await status(broken.id); // the old view threw describing the rule
    expect(shown).toMatchObject({
      state: "ended",
      recurrence: "61 9 * * *",
      recurrence_text: 'cron "61 9 * * *"',
      next_occurrences: [],
      next_job_id: null,
    });
    const listed = await call(client, "task.list", {});
    expect(listed.isError).toBe(false);
    expect(listed.structured.series).toMatchObject([{ id: broken.id, state: "ended" }]);
  });

  it("refuses a rule for a one-shot task's reschedule", async () => {
    const task = await callTask(client, "task.create", {
      description: "once",
      scheduled_at: "in 1 hour",
    });
    expect(task.series_id).toBeNull();
    const r = await call(client, "task.reschedule", {
      job_id: task.id,
      recurrence: "every day at 8",
    });
    expect(r.structured).toMatchObject({ field: "recurrence" });
    const none = await call(client, "task.reschedule", { job_id: task.id });
    expect(none.structured).toMatchObject({ field: "scheduled_at" });
  });
});
