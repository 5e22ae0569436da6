import { trace } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { makeHarness, record } from "../support/harness.js";
import { startReceiver, startTestService, waitForJob } from "../service/helpers.js";

// No SDK registered in this file (its own process): @opentelemetry/api alone is a no-op.
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
let h: ReturnType<typeof makeHarness> | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("OpenTelemetry without an SDK", () => {
  it("stores no trace context and runs handlers outside any span", async () => {
    h = makeHarness({ start: T0 });
    const active: unknown[] = [];
    h.scheduler.handle("t", () => void active.push(trace.getActiveSpan()));
    const { job } = await h.scheduler.schedule({ dueAt: T0, target: "t" });
    const [other] = await h.scheduler.scheduleMany([{ dueAt: T0, target: "t" }]);
    expect([job.traceContext, other!.job.traceContext]).toEqual([null, null]);
    // Nothing written: the column is NULL in the file itself.
    const stored = h.store.connection.prepare("SELECT trace_context FROM jobs").all();
    expect(stored).toEqual([{ trace_context: null }, { trace_context: null }]);
    const done = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 1);
    await h.scheduler.idle();
    expect(done).toHaveLength(2);
    expect(active).toEqual([undefined, undefined]);
  });

  it("sends webhooks without traceparent", async () => {
    const t = await startTestService();
    const rx = await startReceiver();
    try {
      const c = await t.api("POST", "/v1/jobs", { body: { delayMs: 0, target: rx.url } });
      const req = await rx.nth(1);
      await waitForJob(t, c.body.job.id, (j) => j.status === "succeeded");
      expect(req.headers.traceparent).toBeUndefined();
      expect(req.headers.tracestate).toBeUndefined();
    } finally {
      await t.close();
      await rx.close();
    }
  });
});
