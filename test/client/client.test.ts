import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  createClient,
  DuetimeApiError,
  DuetimeConnectionError,
  type DuetimeClient,
} from "../../src/client/index.js";
import { ManualClock } from "../../src/core/clock.js";
import { startTestService, type TestService } from "../service/helpers.js";

const FAR = { delayMs: 86_400_000, target: "https://hooks.example.com/a" };

let t: TestService | undefined;
let stub: Server | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await new Promise((r) => (stub ? stub.close(r) : r(undefined)));
  stub = undefined;
});

function clientOf(svc: TestService, opts: { retries?: number; maxRetryDelayMs?: number } = {}) {
  return createClient({ url: `${svc.svc.url}/`, apiKey: svc.acme.key, ...opts });
}

async function thrown(p: Promise<unknown>): Promise<DuetimeApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DuetimeApiError);
  return err as DuetimeApiError;
}

describe("duetime/client against a real service", () => {
  it("creates, reads, lists, reschedules with If-Match, cancels and reads stats", async () => {
    t = await startTestService();
    const c: DuetimeClient = clientOf(t);
    const made = await c.createJob({ ...FAR, payload: { n: 1 } });
    expect(made.created).toBe(true);
    expect(made.job.key).toMatch(/^client-[0-9a-f-]{36}$/);
    const job = await c.getJob(made.job.id);
    expect(job).toMatchObject({ id: made.job.id, tenant: "acme", payload: { n: 1 }, version: 1 });
    expect((await c.listJobs({ status: "pending" })).jobs.map((j) => j.id)).toEqual([job.id]);

    const moved = await c.rescheduleJob(job.id, { delayMs: 3_600_000 }, { ifMatch: job.version });
    expect(moved.outcome).toBe("rescheduled");
    const stale = await thrown(
      c.rescheduleJob(job.id, { delayMs: 60_000 }, { ifMatch: job.version }),
    );
    expect(stale.status).toBe(412);
    expect((stale.body as { job: { version: number } }).job.version).toBe(moved.job.version);

    expect((await c.cancelJob(job.id)).outcome).toBe("cancelled");
    const late = await thrown(c.cancelJob(job.id));
    expect([late.status, late.code]).toEqual([409, "too-late"]);
    const missing = await thrown(c.getJob("01JD3V6Q5X4W8N2M7K9P0R1S2T"));
    expect(missing.status).toBe(404);

    const batch = await c.createJobs([FAR, { ...FAR, key: "mine" }]);
    expect(batch.jobs.map((j) => j.job.key?.startsWith("client-"))).toEqual([true, false]);
    expect((await c.getStats()).counts).toMatchObject({ pending: 2, cancelled: 1 });
    // call() reaches operations without a named method.
    expect(await c.call("health")).toMatchObject({ status: "ok" });
  });

  it("reaches a job by its key and reads the change feed page by page", async () => {
    t = await startTestService();
    const c = clientOf(t);
    const made = await c.createJob({ ...FAR, key: "user:42:standup" });
    expect((await c.getJobByKey("user:42:standup")).id).toBe(made.job.id);
    const moved = await c.rescheduleJobByKey(
      "user:42:standup",
      { delayMs: 7_200_000 },
      { ifMatch: made.job.version },
    );
    expect(moved.outcome).toBe("rescheduled");
    const stale = await thrown(
      c.rescheduleJobByKey("user:42:standup", { delayMs: 60_000 }, { ifMatch: made.job.version }),
    );
    expect(stale.status).toBe(412);
    expect((await c.cancelJobByKey("user:42:standup")).outcome).toBe("cancelled");
    const missing = await thrown(c.getJobByKey("no-such-key"));
    expect([missing.status, missing.field]).toEqual([404, "key"]);

    const first = await c.listChanges({ limit: 2 });
    expect(first.changes.map((ch) => ch.kind)).toEqual(["scheduled", "rescheduled"]);
    const rest = await c.listChanges({ after: first.next, limit: 10 });
    expect(rest.changes.map((ch) => ch.kind)).toEqual(["cancelled"]);
    expect(rest.changes.every((ch) => ch.id === made.job.id)).toBe(true);
  });

  it("creates, reads, lists, changes with If-Match, pauses, skips, previews and deletes a series", async () => {
    // a June day: no DST change in Paris for the days the series moves through
    t = await startTestService({ clock: new ManualClock(Date.UTC(2026, 5, 10, 12)) });
    const c = clientOf(t);
    const made = await c.createSchedule({
      cron: "0 9 * * 1-5",
      timeZone: "Europe/Paris",
      target: FAR.target,
    });
    expect(made.created).toBe(true);
    expect(made.schedule.key).toMatch(/^client-[0-9a-f-]{36}$/);
    const id = made.schedule.id;
    expect(await c.getSchedule(id)).toMatchObject({ id, cron: "0 9 * * 1-5", state: "active" });
    expect((await c.listSchedules({ state: "active" })).schedules.map((x) => x.id)).toEqual([id]);

    const changed = await c.updateSchedule(id, { cron: "30 17 * * *" }, { ifMatch: 1 });
    expect(changed).toMatchObject({ version: 2, cron: "30 17 * * *" });
    const stale = await thrown(c.updateSchedule(id, { cron: "0 8 * * *" }, { ifMatch: 1 }));
    expect([stale.status, stale.code, stale.field]).toEqual([412, "version-conflict", "if-match"]);
    expect((stale.body as { schedule: { version: number } }).schedule.version).toBe(2);

    expect((await c.pauseSchedule(id)).state).toBe("paused");
    const resumed = await c.resumeSchedule(id);
    const skipped = await c.skipNextOccurrence(id, { ifMatch: resumed.version });
    // Wednesday 10 June: 17:30 Paris today is pending, skipped for tomorrow's
    expect([resumed.nextAt, skipped.nextAt]).toEqual([
      "2026-06-10T15:30:00.000Z",
      "2026-06-11T15:30:00.000Z",
    ]);
    // from the pending occurrence: the skipped one is not shown as coming
    const next = await c.nextOccurrences(id, { count: 2 });
    expect(next.occurrences.map((o) => o.at)).toEqual([
      "2026-06-11T15:30:00.000Z",
      "2026-06-12T15:30:00.000Z",
    ]);
    const preview = await c.previewOccurrences({
      rrule: "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=12;BYMINUTE=0;BYSECOND=0",
      timeZone: "UTC",
      from: "2028-01-15T00:00:00Z",
      count: 2,
    });
    // the last day of January and of February in a leap year
    expect(preview.occurrences.map((o) => o.at)).toEqual([
      "2028-01-31T12:00:00.000Z",
      "2028-02-29T12:00:00.000Z",
    ]);
    const bad = await thrown(c.previewOccurrences({ cron: "0 9 * *" }));
    expect([bad.status, bad.field]).toEqual([400, "cron"]);

    expect((await c.deleteSchedule(id)).id).toBe(id);
    const gone = await thrown(c.getSchedule(id));
    expect([gone.status, gone.field]).toEqual([404, "id"]);
  });

  it("throws the API's code, field, expected and received for bad input", async () => {
    t = await startTestService();
    const err = await thrown(clientOf(t).createJob({ delayMs: -5, target: FAR.target }));
    expect(err).toMatchObject({ status: 400, code: "invalid", field: "delayMs", received: "-5" });
    expect(err.expected).not.toBe("");
    const batch = await thrown(clientOf(t).createJobs([FAR, { target: "ftp://x" }]));
    expect((batch.body as { errors: { index: number }[] }).errors[0]).toMatchObject({ index: 1 });
  });

  it("retries a 429 after its Retry-After; the same key makes the retried create one job", async () => {
    t = await startTestService({ quotas: { createsPerSecond: 1, createsBurst: 1 } });
    await clientOf(t).createJob(FAR);
    const refused = await thrown(clientOf(t, { retries: 0 }).createJob(FAR));
    expect([refused.status, refused.code]).toEqual([429, "quota-exceeded"]);
    expect(refused.retryAfterMs).toBeGreaterThanOrEqual(1000);
    // Asked to wait longer than allowed: thrown at once, not waited out.
    const impatient = await thrown(clientOf(t, { maxRetryDelayMs: 10 }).createJob(FAR));
    expect(impatient.status).toBe(429);
    const before = Date.now();
    const made = await clientOf(t).createJob(FAR);
    expect(made.created).toBe(true);
    expect(Date.now() - before).toBeGreaterThanOrEqual(refused.retryAfterMs! - 50);
    expect((await clientOf(t).getStats()).counts).toMatchObject({ pending: 2 });
  });

  it("retries a 503 with Retry-After, sending the same idempotency key again", async () => {
    const seen: { headers: IncomingHttpHeaders; body: string }[] = [];
    stub = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        seen.push({ headers: req.headers, body });
        if (seen.length === 1) {
          res.writeHead(503, { "retry-after": "0", "content-type": "application/json" });
          res.end(JSON.stringify({ error: { code: "unavailable", message: "restarting" } }));
          return;
        }
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ created: true, job: { id: "x", ...JSON.parse(body) } }));
      });
    });
    await new Promise<void>((r) => stub!.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    const made = await createClient({ url, apiKey: "k" }).createJob(FAR);
    expect(made.created).toBe(true);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.body).toBe(seen[0]!.body);
    expect(JSON.parse(seen[0]!.body).key).toMatch(/^client-/);
    expect(seen[0]!.headers.authorization).toBe("Bearer k");
  });

  it("an unreachable server is a DuetimeConnectionError naming it", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    const err = await createClient({ url, apiKey: "k" })
      .getStats()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DuetimeConnectionError);
    expect((err as Error).message).toContain(url);
  });
});
