import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeOnEveryStore, record, type Harness } from "../support/harness.js";
import { registerInMemorySdk } from "../support/tracing.js";
import { startReceiver, startTestService, waitForJob } from "../service/helpers.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const sdk = registerInMemorySdk();
afterAll(() => sdk.shutdown());
beforeEach(() => sdk.exporter.reset());

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const spanNamed = (name: string) => sdk.spans().filter((s) => s.name === name);

describeOnEveryStore("OpenTelemetry with the real SDK registered", (make) => {
  it("a schedule span in the caller's trace; the attempt is a root linked to it, not its child", async () => {
    h = await make({ start: T0 });
    h.scheduler.handle("remind", () => "ok");
    const request = trace.getTracer("test").startSpan("request");
    const ctx = trace.setSpan(context.active(), request);
    const { job } = await context.with(ctx, () =>
      h!.scheduler.schedule({ dueAt: T0 + 100, target: "remind", payload: { user: 1 } }),
    );
    request.end();
    const [schedule] = spanNamed("schedule");
    expect(schedule).toBeDefined();
    expect(schedule!.kind).toBe(SpanKind.PRODUCER);
    expect(schedule!.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(schedule!.attributes).toMatchObject({
      "messaging.system": "duetime",
      "messaging.batch.message_count": 1,
      "messaging.message.id": job.id,
    });
    const sc = schedule!.spanContext();
    // Stored in its own column, read back by the claim: targetOptions stays the caller's.
    expect(job.traceContext).toBe(`00-${sc.traceId}-${sc.spanId}-01`);
    expect(job.targetOptions).toBeNull();
    expect(await h.scheduler.get(job.id)).toMatchObject({ traceContext: job.traceContext });

    const done = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 150);
    await h.scheduler.idle();
    expect(done).toHaveLength(1);
    const [fire] = spanNamed("fire remind");
    expect(fire).toBeDefined();
    expect(fire!.kind).toBe(SpanKind.CONSUMER);
    expect(fire!.parentSpanContext).toBeUndefined();
    expect(fire!.spanContext().traceId).not.toBe(sc.traceId);
    expect(fire!.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
      [sc.traceId, sc.spanId],
    ]);
    expect(fire!.attributes).toMatchObject({
      "messaging.operation.type": "process",
      "messaging.message.id": job.id,
      "messaging.destination.name": "remind",
      "duetime.tenant": "default",
      "duetime.attempt": 1,
      "duetime.lateness_ms": 0,
      "duetime.outcome": "succeeded",
    });
    expect(fire!.status.code).toBe(SpanStatusCode.OK);
  });

  it("records a failed attempt's error and retry time; each attempt links to the schedule", async () => {
    h = await make({ start: T0, backoffBaseMs: 1000 });
    let calls = 0;
    h.scheduler.handle("flaky", () => {
      if (++calls === 1) throw new Error("receiver down");
      return "ok";
    });
    const { job } = await h.scheduler.schedule({ dueAt: T0, target: "flaky", maxAttempts: 3 });
    const events = record(h.scheduler, "failed", "succeeded");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 60_000);
    await h.scheduler.idle();
    const failed = events.find((e) => e.kind === "failed")!.args as { retryAt: number };
    expect(events.map((e) => e.kind)).toEqual(["failed", "succeeded"]);

    const fires = spanNamed("fire flaky");
    expect(fires.map((s) => s.attributes["duetime.attempt"])).toEqual([1, 2]);
    const [first, second] = fires;
    expect(first!.status).toEqual({ code: SpanStatusCode.ERROR, message: "receiver down" });
    expect(first!.events.map((e) => e.name)).toEqual(["exception"]);
    expect(first!.attributes).toMatchObject({
      "duetime.outcome": "retry",
      "duetime.retry_at": failed.retryAt,
    });
    expect(second!.status.code).toBe(SpanStatusCode.OK);
    const scheduled = spanNamed("schedule")[0]!.spanContext().spanId;
    expect(fires.map((s) => s.links[0]?.context.spanId)).toEqual([scheduled, scheduled]);
    expect(job.attempts).toBe(0);
  });

  it("one span for a batch, with its count; invalid input is recorded on it", async () => {
    h = await make({ start: T0 });
    const jobs = await h.scheduler.scheduleMany([
      { dueAt: T0 + 1000, target: "t" },
      { dueAt: T0 + 2000, target: "t" },
      { dueAt: T0 + 3000, target: "t" },
    ]);
    const [batch] = spanNamed("schedule");
    expect(batch!.attributes["messaging.batch.message_count"]).toBe(3);
    const traces = new Set(jobs.map((r) => r.job.traceContext));
    expect([...traces]).toEqual([
      `00-${batch!.spanContext().traceId}-${batch!.spanContext().spanId}-01`,
    ]);

    await expect(h.scheduler.schedule({ dueAt: "whenever", target: "t" })).rejects.toThrow(/dueAt/);
    const refused = spanNamed("schedule")[1]!;
    expect(refused.status.code).toBe(SpanStatusCode.ERROR);
    expect(refused.events[0]!.name).toBe("exception");
  });
});

describe("OpenTelemetry in the service", () => {
  it("a webhook delivery carries the attempt's traceparent to a loopback receiver", async () => {
    const t = await startTestService();
    const rx = await startReceiver();
    try {
      const c = await t.api("POST", "/v1/jobs", { body: { delayMs: 0, target: rx.url } });
      expect(c.status).toBe(201);
      const req = await rx.nth(1);
      await waitForJob(t, c.body.job.id, (j) => j.status === "succeeded");
      const fire = sdk.spans().find((s) => s.name.startsWith("fire http://127.0.0.1:"));
      expect(fire).toBeDefined();
      const sc = fire!.spanContext();
      expect(req.headers.traceparent).toBe(`00-${sc.traceId}-${sc.spanId}-01`);
      expect(fire!.attributes["duetime.tenant"]).toBe("acme");
      // The target's path (which may carry a token) is not in the span.
      expect(fire!.attributes["messaging.destination.name"]).toBe(new URL(rx.url).origin);
    } finally {
      await t.close();
      await rx.close();
    }
  });
});
