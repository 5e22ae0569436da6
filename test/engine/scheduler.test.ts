import { afterEach, expect, it } from "vitest";
import { InvalidJobError } from "../../src/core/errors.js";
import { PermanentJobError, RetryLaterError } from "../../src/engine/handler-errors.js";
import type { Job } from "../../src/core/job.js";
import { type Harness, describeOnEveryStore, record } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describeOnEveryStore("Scheduler firing (manual clock)", (make) => {
  it("fires each job at its due millisecond and never earlier", async () => {
    h = await make();
    const firedAt = new Map<string, number>();
    h.scheduler.handle("remind", (job) => {
      firedAt.set(job.id, h.clock.now());
    });
    const dues = [T0 + 100, T0 + 1500, T0 + 1501, T0 + 45_000];
    const jobs = await h.scheduler.scheduleMany(dues.map((dueAt) => ({ dueAt, target: "remind" })));
    const events = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 99);
    expect(firedAt.size).toBe(0);
    await h.clock.advanceTo(T0 + 100);
    expect(firedAt.get(jobs[0]!.job.id)).toBe(T0 + 100);
    await h.clock.advanceTo(T0 + 1500);
    expect(firedAt.size).toBe(2);
    await h.clock.advanceTo(T0 + 60_000);
    expect(firedAt.size).toBe(4);
    for (const { job } of jobs) expect(firedAt.get(job.id)).toBe(job.dueAt);
    expect(events.map((e) => e.args.latenessMs)).toEqual([0, 0, 0, 0]);
    for (const { job } of jobs) {
      expect(await h.scheduler.get(job.id)).toMatchObject({
        status: "succeeded",
        attempts: 1,
        firedAt: job.dueAt,
      });
    }
  });

  it("emits the deprecated `fired` right after `succeeded`, with the same argument", async () => {
    h = await make();
    h.scheduler.handle("t", () => ({ ok: true }));
    h.scheduler.handle("boom", () => {
      throw new PermanentJobError("no");
    });
    await h.scheduler.schedule({ dueAt: T0 + 5, target: "t" });
    await h.scheduler.schedule({ dueAt: T0 + 6, target: "boom" });
    const events = record(h.scheduler, "succeeded", "fired", "dead");
    h.scheduler.start();
    await h.clock.advance(10);
    expect(events.map((e) => e.kind)).toEqual(["succeeded", "fired", "dead"]);
    expect(events[1]!.args).toBe(events[0]!.args);
    expect(events[0]!.args).toMatchObject({ result: { ok: true }, latenessMs: 0 });
  });

  it("wakes at once when a write moves the earliest due time earlier", async () => {
    h = await make({ maxIdleMs: 3_600_000 });
    const fired: number[] = [];
    h.scheduler.handle("t", () => {
      fired.push(h.clock.now());
    });
    await h.scheduler.schedule({ dueAt: T0 + 2 * HOUR, target: "t" });
    h.scheduler.start();
    await h.clock.advance(10);
    // the watcher now sleeps until the far job; a nearer one must cut that sleep short
    const { job } = await h.scheduler.schedule({ delayMs: 50, target: "t" });
    await h.clock.advanceTo(job.dueAt);
    expect(fired).toEqual([job.dueAt]);
  });

  it("retries with exponential backoff and jitter, then records the job dead with its last error", async () => {
    h = await make({ backoffBaseMs: 1000, maxAttempts: 3 });
    const attempts: number[] = [];
    h.scheduler.handle("flaky", (_job, ctx) => {
      attempts.push(h.clock.now());
      throw new Error(`boom ${ctx.attempt}`);
    });
    const events = record(h.scheduler, "failed", "dead");
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 10, target: "flaky" });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 60_000);
    expect(attempts.length).toBe(3);
    const gap1 = attempts[1]! - attempts[0]!;
    const gap2 = attempts[2]! - attempts[1]!;
    expect(gap1).toBeGreaterThanOrEqual(500);
    expect(gap1).toBeLessThanOrEqual(1000);
    expect(gap2).toBeGreaterThanOrEqual(1000);
    expect(gap2).toBeLessThanOrEqual(2000);
    expect(events.map((e) => e.kind)).toEqual(["failed", "failed", "dead"]);
    expect(await h.scheduler.get(job.id)).toMatchObject({
      status: "dead",
      attempts: 3,
      lastError: "boom 3",
    });
  });

  it("fires a retry at its backoff however long the watcher meant to sleep", async () => {
    // the watcher plans an hour's sleep while the job is claimed; only the node itself knows
    // of the retry it writes (no store notifies its own node)
    h = await make({ backoffBaseMs: 1000, maxAttempts: 2, maxIdleMs: 3_600_000 });
    const attempts: number[] = [];
    h.scheduler.handle("flaky", () => {
      attempts.push(h.clock.now());
      if (attempts.length === 1) throw new Error("boom");
    });
    const events = record(h.scheduler, "failed");
    await h.scheduler.schedule({ dueAt: T0 + 10, target: "flaky" });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 10);
    expect(attempts).toEqual([T0 + 10]);
    const retryAt = events[0]!.args.retryAt;
    await h.clock.advanceTo(retryAt);
    expect(attempts).toEqual([T0 + 10, retryAt]);
  });

  it("a PermanentJobError goes dead at once; a RetryLaterError waits as long as it asks", async () => {
    h = await make({ backoffBaseMs: 10, maxAttempts: 5 });
    const attempts: number[] = [];
    h.scheduler.handle("gone", () => {
      throw new PermanentJobError("HTTP 410 Gone");
    });
    h.scheduler.handle("busy", () => {
      attempts.push(h.clock.now());
      if (attempts.length === 1) throw new RetryLaterError("HTTP 429", 30_000);
      return "ok";
    });
    const gone = await h.scheduler.schedule({ dueAt: T0, target: "gone" });
    const busy = await h.scheduler.schedule({ dueAt: T0, target: "busy" });
    h.scheduler.start();
    await h.clock.advance(5);
    expect(await h.scheduler.get(gone.job.id)).toMatchObject({
      status: "dead",
      attempts: 1,
      lastError: "HTTP 410 Gone",
    });
    await h.clock.advance(29_000);
    expect(attempts.length).toBe(1);
    await h.clock.advance(1_100);
    expect(attempts.length).toBe(2);
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(30_000);
    expect(await h.scheduler.get(busy.job.id)).toMatchObject({
      status: "succeeded",
      lastError: "HTTP 429",
    });
  });

  it("jobs whose target has no named handler go to the fallback handler", async () => {
    h = await make();
    const seen: string[] = [];
    h.scheduler.handleOther((job) => {
      seen.push(job.target);
    });
    await h.scheduler.schedule({ dueAt: T0, target: "https://example.test/hook" });
    h.scheduler.start();
    await h.clock.advance(5);
    expect(seen).toEqual(["https://example.test/hook"]);
  });

  it("a job with no registered handler goes dead with a clear error", async () => {
    h = await make();
    const { job } = await h.scheduler.schedule({ dueAt: T0, target: "nobody" });
    h.scheduler.start();
    await h.clock.advance(10);
    expect(await h.scheduler.get(job.id)).toMatchObject({
      status: "dead",
      lastError: 'no handler registered for target "nobody"',
    });
  });

  it("a handler that hangs past its timeout fails the attempt and is retried", async () => {
    h = await make({ handlerTimeoutMs: 5000, leaseMs: 60_000, backoffBaseMs: 100 });
    let calls = 0;
    h.scheduler.handle("slow", async (_job, ctx) => {
      calls++;
      if (calls === 1) {
        await new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
        );
      }
      return "ok";
    });
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 1, target: "slow" });
    h.scheduler.start();
    await h.clock.advance(4000);
    expect((await h.scheduler.get(job.id))!.status).toBe("claimed");
    await h.clock.advance(2000);
    await h.clock.advance(1000);
    expect(calls).toBe(2);
    expect(await h.scheduler.get(job.id)).toMatchObject({
      status: "succeeded",
      lastResult: "ok",
      lastError: "handler timed out after 5000 ms",
    });
  });

  it("never runs more handlers at once than the concurrency limit", async () => {
    h = await make({ concurrency: 3 });
    let running = 0;
    let peak = 0;
    const release: (() => void)[] = [];
    h.scheduler.handle("t", async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((r) => release.push(r));
      running--;
    });
    await h.scheduler.scheduleMany(Array.from({ length: 10 }, () => ({ dueAt: T0, target: "t" })));
    const fired = record(h.scheduler, "succeeded");
    h.scheduler.start();
    await h.clock.advance(5);
    expect(running).toBe(3);
    while (fired.length < 10) {
      release.splice(0).forEach((r) => r());
      await h.clock.advance(1);
    }
    expect(peak).toBe(3);
  });
});

describeOnEveryStore("catch-up after downtime", (make) => {
  it("fires a 3-day backlog oldest first in bounded batches, expiring only jobs whose policy says so", async () => {
    h = await make({ claimBatchSize: 50, stageBatchSize: 40 });
    const order: number[] = [];
    h.scheduler.handle("t", (job: Job) => {
      order.push(job.dueAt);
    });
    const inputs = [];
    for (let hr = 0; hr < 72; hr++) {
      for (const min of [59, 0, 30])
        inputs.push({ dueAt: T0 + hr * HOUR + min * 60_000, target: "t" });
    }
    const strict = { dueAt: T0 + 5 * 60_000, target: "t", expireAfterMs: 60_000 };
    const [strictJob, ...rest] = await h.scheduler.scheduleMany([strict, ...inputs.reverse()]);
    // the process was down for 3 days
    h.clock.set(T0 + 3 * DAY + 1000);
    const events = record(h.scheduler, "succeeded", "expired");
    h.scheduler.start();
    while (events.length < rest.length + 1) await h.clock.advance(1);
    expect(order).toEqual(inputs.map((i) => i.dueAt).sort((a, b) => a - b));
    const expired = events.filter((e) => e.kind === "expired");
    expect(expired.map((e) => e.args.job.id)).toEqual([strictJob!.job.id]);
    expect(await h.scheduler.get(strictJob!.job.id)).toMatchObject({ status: "expired" });
    const lateness = events.filter((e) => e.kind === "succeeded").map((e) => e.args.latenessMs);
    expect(Math.max(...lateness)).toBeGreaterThan(2 * DAY);
    const stats = await h.scheduler.stats();
    expect(stats.counts).toMatchObject({ pending: 0, claimed: 0, succeeded: 216, expired: 1 });
  });

  it("loses nothing at a bucket boundary: jobs a few ms either side fire on their millisecond", async () => {
    h = await make({ bucketWidthMs: 60_000, stageAheadMs: 1000, horizonMs: 200 });
    const boundary = T0 + 60_000;
    const dues = [-3, -2, -1, 0, 1, 2, 3].map((d) => boundary + d);
    const fired = new Map<number, number>();
    h.scheduler.handle("t", (job) => {
      fired.set(job.dueAt, h.clock.now());
    });
    await h.scheduler.scheduleMany(dues.map((dueAt) => ({ dueAt, target: "t" })));
    h.scheduler.start();
    await h.clock.advanceTo(boundary + 10);
    expect([...fired.keys()].sort()).toEqual(dues);
    for (const [due, at] of fired) expect(at).toBe(due);
  });

  it("a job scheduled into an overdue bucket while the watcher runs is not skipped", async () => {
    h = await make({ bucketWidthMs: 60_000 });
    const fired: string[] = [];
    h.scheduler.handle("t", (job) => {
      fired.push(job.id);
    });
    h.scheduler.start();
    await h.clock.advance(5 * 60_000);
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 30_000, target: "t" });
    await h.clock.advance(5);
    expect(fired).toEqual([job.id]);
  });
});

describeOnEveryStore("stopping", (make) => {
  it("hands back claimed jobs that have not started, attempt not counted", async () => {
    h = await make({ horizonMs: 1000 });
    h.scheduler.handle("t", () => undefined);
    const { job } = await h.scheduler.schedule({ dueAt: T0 + 800, target: "t" });
    h.scheduler.start();
    await h.clock.advance(1);
    expect(await h.scheduler.get(job.id)).toMatchObject({ status: "claimed" });
    await h.scheduler.stop();
    expect(await h.scheduler.get(job.id)).toMatchObject({
      status: "pending",
      attempts: 0,
      leaseOwner: null,
    });
  });
});

describeOnEveryStore("the library surface", (make) => {
  it("validates every job of scheduleMany before storing any", async () => {
    h = await make();
    const bad = h.scheduler.scheduleMany([
      { dueAt: T0 + 1, target: "t" },
      { dueAt: "next blursday", target: "t" },
    ]);
    await expect(bad).rejects.toThrow(InvalidJobError);
    await expect(bad).rejects.toThrow(/^jobs\[1\]\.dueAt: expected .*, received "next blursday"$/);
    expect((await h.scheduler.stats()).counts.pending).toBe(0);
  });

  it("rejects oversized payloads and unknown fields, naming the field", async () => {
    h = await make({ maxPayloadBytes: 100 });
    await expect(
      h.scheduler.schedule({ dueAt: T0, target: "t", payload: "x".repeat(200) }),
    ).rejects.toThrow("payload: expected JSON of at most 100 bytes, received 202 bytes");
    await expect(
      h.scheduler.schedule({ dueAt: T0, target: "t", colour: "red" } as never),
    ).rejects.toThrow(/^colour: expected no such field/);
  });

  it("lists in due order with a cursor, reschedules with a version check and cancels definitely", async () => {
    h = await make();
    const made = await h.scheduler.scheduleMany(
      Array.from({ length: 12 }, (_, i) => ({ dueAt: T0 + (12 - i) * 60_000, target: "t" })),
    );
    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.scheduler.list({ limit: 5, ...(cursor ? { cursor } : {}) });
      all.push(...page.jobs.map((j) => j.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(all).toEqual(made.map((m) => m.job.id).reverse());

    const target = made[0]!.job;
    const stale = await h.scheduler.reschedule(target.id, "in 2 hours", { expectedVersion: 99 });
    expect(stale.outcome).toBe("version-conflict");
    const moved = await h.scheduler.reschedule(target.id, "in 2 hours", { expectedVersion: 1 });
    expect(moved).toMatchObject({
      outcome: "rescheduled",
      job: { dueAt: T0 + 2 * HOUR, version: 2 },
    });
    expect(await h.scheduler.cancel(target.id)).toMatchObject({ outcome: "cancelled" });
    expect(await h.scheduler.cancel(target.id)).toMatchObject({ outcome: "too-late" });
    expect(await h.scheduler.cancel("01ARZ3NDEKTSV4RRFFQ69G5FAV")).toEqual({
      outcome: "not-found",
    });
  });

  it("reports every change it makes on the changed feed, after storing it", async () => {
    h = await make({ maxAttempts: 1 });
    h.scheduler.handle("ok", () => undefined);
    const changes = record(h.scheduler, "changed");
    const a = await h.scheduler.schedule({ dueAt: T0 + 10, target: "ok" });
    const b = await h.scheduler.schedule({ dueAt: T0 + HOUR, target: "ok" });
    await h.scheduler.reschedule(b.job.id, T0 + 2 * HOUR);
    await h.scheduler.cancel(b.job.id);
    h.scheduler.start();
    await h.clock.advance(20);
    expect(changes.map((c) => [c.args.kind, c.args.id, c.args.status])).toEqual([
      ["scheduled", a.job.id, "pending"],
      ["scheduled", b.job.id, "pending"],
      ["rescheduled", b.job.id, "pending"],
      ["cancelled", b.job.id, "cancelled"],
      ["succeeded", a.job.id, "succeeded"],
    ]);
    expect((await h.scheduler.get(a.job.id))!.status).toBe("succeeded");
  });

  it("retries a dead job on request", async () => {
    h = await make({ maxAttempts: 1 });
    let fail = true;
    h.scheduler.handle("t", () => {
      if (fail) throw new Error("down");
      return "up";
    });
    const { job } = await h.scheduler.schedule({ dueAt: T0, target: "t" });
    h.scheduler.start();
    await h.clock.advance(5);
    expect((await h.scheduler.get(job.id))!.status).toBe("dead");
    fail = false;
    expect(await h.scheduler.retry(job.id)).toMatchObject({ outcome: "rescheduled" });
    await h.clock.advance(5);
    expect(await h.scheduler.get(job.id)).toMatchObject({ status: "succeeded", lastResult: "up" });
  });

  it("removes history older than the retention period", async () => {
    h = await make({ retentionMs: DAY });
    h.scheduler.handle("t", () => undefined);
    const { job } = await h.scheduler.schedule({ dueAt: T0, target: "t" });
    const later = await h.scheduler.schedule({ dueAt: T0 + 2 * DAY, target: "t" });
    h.scheduler.start();
    await h.clock.advance(10);
    expect(await h.scheduler.purgeHistory()).toBe(0);
    h.clock.set(T0 + DAY + 1000);
    expect(await h.scheduler.purgeHistory()).toBe(1);
    expect(await h.scheduler.get(job.id)).toBeNull();
    expect(await h.scheduler.get(later.job.id)).toMatchObject({ status: "pending" });
  });
});
