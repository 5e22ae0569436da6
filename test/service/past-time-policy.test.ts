import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { startTestService, type TestService } from "./helpers.js";

/**
 * One past-time check below the adapters (issue 11 §1): the dashboard's snooze and retry
 * accepted a time the REST reschedule refused (the check lived in the REST route). Over real
 * HTTP on a ManualClock; the service's tolerance is 60 s.
 */

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const TARGET = "https://hooks.example.com/x";

describe("a due time too far in the past", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ clock: new ManualClock(T0) });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("is refused alike by the REST reschedule and the dashboard's snooze; within it both move", async () => {
    const made = await t.api("POST", "/v1/jobs", {
      body: { dueAt: new Date(T0 + 3_600_000).toISOString(), target: TARGET },
    });
    expect(made.status).toBe(201);
    const id = made.body.job.id as string;
    const past = new Date(T0 - 120_000).toISOString();
    const rest = await t.api("POST", `/v1/jobs/${id}/reschedule`, { body: { dueAt: past } });
    const snooze = await t.api("POST", `/v1/dashboard/jobs/${id}/reschedule`, {
      body: { dueAt: past },
    });
    for (const r of [rest, snooze]) {
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.field).toBe("dueAt");
      expect(r.body.error.expected).toBe("a time no more than 60000 ms in the past");
    }
    expect(snooze.body.error.message).toBe(rest.body.error.message);
    const job = await t.api("GET", `/v1/jobs/${id}`);
    expect(job.body.job.dueAt).toBe(new Date(T0 + 3_600_000).toISOString()); // not moved

    const near = new Date(T0 - 30_000).toISOString();
    const moved = await t.api("POST", `/v1/dashboard/jobs/${id}/reschedule`, {
      body: { dueAt: near },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const delay = await t.api("POST", `/v1/jobs/${id}/reschedule`, { body: { delayMs: 1000 } });
    expect(delay.status, JSON.stringify(delay.body)).toBe(200);
    expect(delay.body.job.dueAt).toBe(new Date(T0 + 1000).toISOString());
  });
});
