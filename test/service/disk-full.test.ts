import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { mountable, mountSmallDisk, type SmallDisk } from "../support/small-disk.js";
import {
  startReceiver,
  startTestService,
  waitForJob,
  type Receiver,
  type TestService,
} from "./helpers.js";

/**
 * Disk full, for real: the service's SQLite file on a 4 MiB tmpfs, filled to the last byte.
 * Creates answer 507 saying storage is full (nothing half-written), /readyz says not ready,
 * /metrics shows it; once the space is freed, creates succeed again by themselves.
 */
let disk: SmallDisk | null = null;
let t: TestService | null = null;
let rx: Receiver | null = null;
afterEach(async () => {
  try {
    disk?.free(); // a full disk can make the service's close fail
    await t?.close();
    await rx?.close();
  } finally {
    t = null;
    rx = null;
    disk?.unmount(); // always: a mount must not outlive a failed test
    disk = null;
  }
});

/** A job a few tens of KiB large, due far ahead (nothing fires during the test). */
function bigJob(i: number) {
  return {
    dueAt: "2099-01-01T00:00:00Z",
    target: "https://example.test/hook",
    payload: { i, filler: "x".repeat(48 * 1024) },
  };
}

/** Creates big jobs until one is refused; returns that answer and how many were stored. */
async function createUntilRefused(svc: TestService, from: number) {
  let stored = 0;
  for (let i = from; i < from + 200; i++) {
    const r = await svc.api("POST", "/v1/jobs", { body: bigJob(i) });
    if (r.status !== 201) return { refused: r, stored };
    stored++;
  }
  return { refused: null, stored };
}

function metric(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
}

describe.skipIf(!mountable())("disk full (a real SQLite file on a small tmpfs)", () => {
  it("answers 507, reports not-ready and a metric, writes nothing, and resumes once space is back", async () => {
    disk = mountSmallDisk(4);
    // readiness re-probed on every request (no cache), so the test sees each change at once
    t = await startTestService({ db: join(disk.path, "jobs.db"), readinessCacheMs: 1 });
    expect((await t.api("POST", "/v1/jobs", { body: bigJob(0) })).status).toBe(201);
    expect(disk.fill()).toBeGreaterThan(0);

    // The file's free pages and the WAL's allocated space may take a few more jobs first.
    const { refused, stored: more } = await createUntilRefused(t, 1);
    const stored = 1 + more;
    expect(refused).not.toBeNull();
    expect(refused!.status).toBe(507);
    expect(refused!.headers.get("retry-after")).toBe("30");
    expect(refused!.body).toEqual({
      error: {
        code: "storage-full",
        field: "storage",
        expected: "free space in the server's storage",
        received: "a full disk",
        message: expect.stringMatching(
          /^storage is full: inserting jobs failed and nothing of it was written/,
        ),
      },
    });
    // a batch is refused whole too
    const batch = await t.api("POST", "/v1/jobs/batch", {
      body: { jobs: [bigJob(1000), bigJob(1001)] },
    });
    expect(batch.status).toBe(507);

    const ready = await t.api("GET", "/readyz", { key: null });
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      status: "unavailable",
      error: expect.stringContaining("storage is full"),
    });
    expect((await t.api("GET", "/healthz", { key: null })).status).toBe(200);
    const metrics = (await t.api("GET", "/metrics", { key: null })).body as string;
    expect(metric(metrics, "duetime_storage_full")).toBe(1);
    expect(metric(metrics, "duetime_storage_full_errors_total")).toBeGreaterThanOrEqual(2);
    // Nothing half-written: exactly the jobs answered 201 are stored, and they read back.
    const list = await t.api("GET", "/v1/jobs?limit=1000");
    expect(list.status).toBe(200);
    expect(list.body.jobs).toHaveLength(stored);

    disk.free();
    // Readiness comes back by itself (its probe writes one row), before any create.
    expect((await t.api("GET", "/readyz", { key: null })).status).toBe(200);
    const again = await t.api("POST", "/v1/jobs", { body: bigJob(2000) });
    expect(again.status).toBe(201);
    const after = (await t.api("GET", "/metrics", { key: null })).body as string;
    expect(metric(after, "duetime_storage_full")).toBe(0);
    expect((await t.api("GET", "/v1/jobs?limit=1000")).body.jobs).toHaveLength(stored + 1);
  }, 60_000);

  it("with a ballast, due jobs fire and their outcomes are recorded on a disk full to the last byte", async () => {
    disk = mountSmallDisk(4);
    const clock = new ManualClock(Date.UTC(2026, 2, 1, 10, 0, 0));
    const db = join(disk.path, "jobs.db");
    const ballastBytes = 512 * 1024;
    t = await startTestService({ db, clock, ballastBytes, readinessCacheMs: 1 });
    rx = await startReceiver();
    expect(statSync(`${db}.ballast`).size).toBe(ballastBytes);
    const due = await Promise.all(
      [1, 2, 3].map((n) =>
        t!.api("POST", "/v1/jobs", {
          body: { dueAt: "in 10 minutes", target: rx!.url, payload: { n }, maxAttempts: 1 },
        }),
      ),
    );
    expect(due.map((r) => r.status)).toEqual([201, 201, 201]);
    disk.fill();
    // the first write refused for lack of space releases the ballast; creates stay refused
    const { refused } = await createUntilRefused(t, 0);
    expect(refused?.status).toBe(507);
    expect(existsSync(`${db}.ballast`)).toBe(false);
    const again = await t.api("POST", "/v1/jobs", { body: bigJob(999) });
    expect(again.status).toBe(507);
    expect(again.body.error.message).toMatch(/reserve was released to keep jobs firing/);
    expect((await t.api("GET", "/readyz", { key: null })).status).toBe(503);

    // before: the claim itself was refused, and the jobs waited for space
    await clock.advance(10 * 60_000 + 1);
    const delivered = await Promise.all([rx.nth(1), rx.nth(2), rx.nth(3)]);
    expect(
      delivered.map((d) => (JSON.parse(d.body) as { payload: { n: number } }).payload.n).sort(),
    ).toEqual([1, 2, 3]);
    for (const r of due) {
      const job = await waitForJob(t, r.body.job.id, (j) => j.status === "succeeded");
      expect(job.attempts).toBe(1);
    }
    // still full: creates refused, not ready
    expect((await t.api("POST", "/v1/jobs", { body: bigJob(1000) })).status).toBe(507);
    expect((await t.api("GET", "/readyz", { key: null })).status).toBe(503);

    disk.free();
    // the probe writes the ballast back, and readiness and creates resume by themselves
    await clock.advance(2); // past the readiness cache (1 ms on the injected clock)
    expect((await t.api("GET", "/readyz", { key: null })).status).toBe(200);
    expect(statSync(`${db}.ballast`).size).toBe(ballastBytes);
    expect((await t.api("POST", "/v1/jobs", { body: bigJob(2000) })).status).toBe(201);
    expect(rx.requests).toHaveLength(3);
    const check = new Database(db, { readonly: true });
    try {
      expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      check.close();
    }
  }, 60_000);

  // Without a ballast (the library's default): on a disk
  // filled to the last byte even the claim cannot be recorded; the job must wait, lose no
  // attempt, and fire once space is back, with nothing restarted.
  it("a job due while the disk is full waits, spends no attempt, and fires once space is back", async () => {
    disk = mountSmallDisk(4);
    const clock = new ManualClock(Date.UTC(2026, 2, 1, 10, 0, 0));
    t = await startTestService({ db: join(disk.path, "jobs.db"), clock });
    rx = await startReceiver();
    const due = await t.api("POST", "/v1/jobs", {
      body: { dueAt: "in 10 minutes", target: rx.url, payload: { n: 1 }, maxAttempts: 1 },
    });
    expect(due.status).toBe(201);
    disk.fill();
    const { refused } = await createUntilRefused(t, 0);
    expect(refused?.status).toBe(507);

    await clock.advance(10 * 60_000 + 1);
    // Whatever the full disk allowed meanwhile, the job is not dead and not lost.
    const during = await t.api("GET", `/v1/jobs/${due.body.job.id}`);
    expect(during.status).toBe(200);
    expect(["pending", "claimed", "succeeded"]).toContain(during.body.job.status);

    disk.free();
    // The watcher retries with a backoff on the injected clock: drive it, bounded.
    for (let i = 0; i < 120 && rx.requests.length === 0; i++) {
      await clock.advance(1000);
      await new Promise((r) => setTimeout(r, 10));
    }
    const delivered = await rx.nth(1);
    expect(JSON.parse(delivered.body)).toMatchObject({ id: due.body.job.id, payload: { n: 1 } });
    const job = await waitForJob(t, due.body.job.id, (j) => j.status === "succeeded");
    expect(job.attempts).toBe(1);
    expect(rx.requests).toHaveLength(1);
  }, 60_000);
});
