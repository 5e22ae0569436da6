import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import { createWebhookDelivery } from "../../src/service/webhook/deliver.js";
import {
  startReceiver,
  startTestService,
  waitForJob,
  type Receiver,
  type TestService,
} from "./helpers.js";

let t: TestService | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

function webhookJob(target: string, n: number): Job {
  return {
    id: `01ARZ3NDEKTSV4RRFFQ69G5F${String(n).padStart(2, "0")}`,
    tenant: "acme",
    key: null,
    dueAt: Date.now(),
    payload: null,
    target,
    targetOptions: null,
  } as unknown as Job;
}

describe("webhook fair share and timeouts (real HTTP on 127.0.0.1)", () => {
  it("counts the attempt timeout from when the request is sent, not while it waits for a connection", async () => {
    const rx = await startReceiver(() => ({ status: 200, delayMs: 250 }));
    receivers.push(rx);
    const delivery = createWebhookDelivery({
      secretFor: async () => "whsec_test",
      allowPrivateTargets: true,
      connectionsPerOrigin: 1,
      timeoutMs: 1000,
    });
    const ctx = { signal: new AbortController().signal, attempt: 1, latenessMs: 0 };
    // eight at once over one connection: the last waits ~1.75 s for it, but each takes 250 ms
    // on the wire. Before, a timer started with the attempt failed the last four.
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        Promise.resolve(delivery.handler(webhookJob(rx.url, i), ctx)),
      ),
    );
    await delivery.close();
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    expect(rx.requests).toHaveLength(8);
  });

  it("a tenant's slow receiver holding its slots does not delay another tenant's webhook", async () => {
    const held: (() => void)[] = [];
    const slow = await startReceiver(
      () => new Promise((resolve) => held.push(() => resolve({ status: 200 }))),
    );
    const fast = await startReceiver();
    receivers.push(slow, fast);
    t = await startTestService({ scheduler: { concurrency: 10 } });
    const many = await t.api("POST", "/v1/jobs/batch", {
      body: { jobs: Array.from({ length: 30 }, () => ({ delayMs: 0, target: slow.url })) },
    });
    expect(many.status).toBe(201);
    await slow.nth(9);
    const one = await t.api("POST", "/v1/jobs", {
      key: t.umbrella.key,
      body: { delayMs: 0, target: fast.url },
    });
    expect(one.status).toBe(201);
    // before: acme's 30 deliveries queued first took all ten slots, umbrella's waited for them
    await fast.nth(1, 5000);
    expect(held.length).toBe(9);
    await waitForJob(t, one.body.job.id, (j) => j.status === "succeeded", { key: t.umbrella.key });
    while (slow.requests.length < 30 || held.length > 0) {
      held.splice(0).forEach((r) => r());
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it("caps one tenant's deliveries to one origin at webhookConcurrencyPerOrigin", async () => {
    const held: (() => void)[] = [];
    const slow = await startReceiver(
      () => new Promise((resolve) => held.push(() => resolve({ status: 200 }))),
    );
    const other = await startReceiver();
    receivers.push(slow, other);
    t = await startTestService({ webhookConcurrencyPerOrigin: 3, scheduler: { concurrency: 20 } });
    const r = await t.api("POST", "/v1/jobs/batch", {
      body: {
        jobs: [
          ...Array.from({ length: 10 }, () => ({ delayMs: 0, target: slow.url })),
          { delayMs: 0, target: other.url },
        ],
      },
    });
    expect(r.status).toBe(201);
    // the same tenant's other origin has its own lane and goes at once
    await other.nth(1, 5000);
    await slow.nth(3);
    // give a fourth delivery (before: all ten at once) the time to show up
    await new Promise((f) => setTimeout(f, 200));
    expect(held.length).toBe(3);
    while (slow.requests.length < 10 || held.length > 0) {
      expect(held.length).toBeLessThanOrEqual(3);
      held.splice(0).forEach((f) => f());
      await new Promise((f) => setTimeout(f, 20));
    }
  });
});
