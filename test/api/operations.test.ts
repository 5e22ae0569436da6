import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import {
  InvalidJobError,
  OperationKeyConflictError,
  OperationNotFoundError,
} from "../../src/core/errors.js";
import type { Operation } from "../../src/core/operation.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { tempDir } from "../support/temp-dir.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function open(path: string, clock: ManualClock, batch = 3) {
  const store = new SqliteStore({ path });
  const scheduler = new Scheduler({
    store,
    clock,
    logger: silentLogger,
    operationBatchSize: batch,
  });
  cleanups.push(async () => {
    await scheduler.stop({ timeoutMs: 1000 });
    await store.close();
  });
  return scheduler;
}

function setup(batch = 3) {
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  const clock = new ManualClock(T0);
  const path = join(dir.path, "jobs.db");
  return { clock, path, scheduler: open(path, clock, batch) };
}

/** Lets the started runner's zero-delay passes run until the operation ends. */
async function settled(s: Scheduler, clock: ManualClock, id: string): Promise<Operation> {
  for (let i = 0; i < 1000; i++) {
    const op = (await s.getOperation(id))!;
    if (op.state !== "queued" && op.state !== "running") return op;
    await clock.advance(0);
  }
  throw new Error(`operation ${id} did not end`);
}

it("cancels by filter in the background on a started scheduler, progress on the record", async () => {
  const { clock, scheduler } = setup();
  await scheduler.migrate();
  const mine = await scheduler.scheduleMany(
    Array.from({ length: 8 }, (_, i) => ({
      dueAt: T0 + HOUR + i,
      target: "remind",
      tenant: "acme",
    })),
  );
  const other = await scheduler.schedule({ dueAt: T0 + HOUR, target: "remind", tenant: "globex" });
  scheduler.start();
  const { operation: op } = await scheduler.startOperation(
    { kind: "cancel", filter: { target: "remind" } },
    { tenant: "acme" },
  );
  expect(op).toMatchObject({ state: "queued", tenant: "acme", kind: "cancel", changed: 0 });
  const done = await settled(scheduler, clock, op.id);
  expect(done).toMatchObject({ state: "done", scanned: 8, changed: 8, skipped: 0 });
  for (const r of mine) expect((await scheduler.get(r.job.id))!.status).toBe("cancelled");
  expect((await scheduler.get(other.job.id))!.status).toBe("pending");
  // another tenant sees nothing of it
  expect(await scheduler.getOperation(op.id, { tenant: "globex" })).toBeNull();
  expect((await scheduler.listOperations({ tenant: "acme" })).operations.map((o) => o.id)).toEqual([
    op.id,
  ]);
});

it("refuses an empty filter naming filter, and unknown kinds and fields by name", async () => {
  const { scheduler } = setup();
  await scheduler.migrate();
  const refused = async (input: unknown) => {
    try {
      await scheduler.startOperation(input as never);
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidJobError);
      return (err as InvalidJobError).field;
    }
    throw new Error("accepted");
  };
  expect(await refused({ kind: "cancel", filter: {} })).toBe("filter");
  expect(await refused({ kind: "cancel" })).toBe("filter");
  expect(await refused({ kind: "nuke", filter: { all: true } })).toBe("kind");
  expect(await refused({ kind: "cancel", filter: { tag: "x" } })).toBe("filter.tag");
  expect(await refused({ kind: "cancel", filter: { status: ["gone"] } })).toBe("filter.status[0]");
  expect(await refused({ kind: "reschedule", filter: { all: true } })).toBe("dueAt");
  expect(await refused({ kind: "cancel", filter: { all: true }, shiftMs: 5 })).toBe("shiftMs");
  expect(await refused({ kind: "cancel", filter: { dueFrom: T0, dueTo: T0 } })).toBe(
    "filter.dueTo",
  );
  expect((await scheduler.listOperations()).operations).toEqual([]);
  // all: true is the explicit way to every job of the tenant
  const all = await scheduler.startOperation({ kind: "count", filter: { all: true } });
  expect(all.operation.state).toBe("done");
});

it("answers a small count at once, without a started engine", async () => {
  const { scheduler } = setup();
  await scheduler.migrate();
  await scheduler.scheduleMany([
    { dueAt: T0 + HOUR, target: "a", key: "user:42:x" },
    { dueAt: T0 + HOUR, target: "a", key: "user:42:y" },
    { dueAt: T0 + HOUR, target: "a", key: "user:7:x" },
  ]);
  const { operation: op } = await scheduler.startOperation({
    kind: "count",
    of: "cancel",
    filter: { keyPrefix: "user:42:" },
  });
  expect(op).toMatchObject({ state: "done", changed: 2, skipped: 0, scanned: 3 });
});

it("resumes an operation queued before a restart once a scheduler starts on the file", async () => {
  const { clock, path, scheduler } = setup(2);
  await scheduler.migrate();
  const jobs = await scheduler.scheduleMany(
    Array.from({ length: 5 }, (_, i) => ({ dueAt: T0 + HOUR + i, target: "remind" })),
  );
  const { operation: op } = await scheduler.startOperation({
    kind: "reschedule",
    filter: { target: "remind" },
    shiftMs: 60_000,
  });
  // not started: nothing ran; a process that stops here leaves it queued
  expect((await scheduler.getOperation(op.id))!.state).toBe("queued");
  const again = open(path, clock, 2);
  again.start();
  const done = await settled(again, clock, op.id);
  expect(done).toMatchObject({ state: "done", changed: 5 });
  for (const r of jobs) expect((await again.get(r.job.id))!.dueAt).toBe(r.job.dueAt + 60_000);
});

it("cancels an operation: no batch after it; unknown ids throw OperationNotFoundError", async () => {
  const { scheduler } = setup(2);
  await scheduler.migrate();
  await scheduler.scheduleMany(
    Array.from({ length: 6 }, (_, i) => ({ dueAt: T0 + HOUR + i, target: "remind" })),
  );
  const { operation: op } = await scheduler.startOperation({
    kind: "cancel",
    filter: { target: "remind" },
  });
  const cancelled = await scheduler.cancelOperation(op.id);
  expect(cancelled).toMatchObject({ state: "cancelled", changed: 0 });
  expect(await scheduler.runOperation(op.id)).toMatchObject({ state: "cancelled", changed: 0 });
  expect((await scheduler.stats()).counts.pending).toBe(6);
  await expect(scheduler.cancelOperation("01NOPE")).rejects.toBeInstanceOf(OperationNotFoundError);
});

it("runs an operation to its end in the call, with progress after each batch", async () => {
  const { scheduler } = setup(2);
  await scheduler.migrate();
  await scheduler.scheduleMany(
    Array.from({ length: 5 }, (_, i) => ({ dueAt: T0 + HOUR + i, target: "remind" })),
  );
  const { operation: op } = await scheduler.startOperation({
    kind: "erase",
    filter: { target: "remind" },
  });
  const seen: number[] = [];
  const done = await scheduler.runOperation(op.id, (o) => seen.push(o.changed));
  expect(seen).toEqual([2, 4, 5]);
  expect(done).toMatchObject({ state: "done", changed: 5 });
  expect((await scheduler.stats()).counts.pending).toBe(0);
});

it("a start with a held key answers the first operation; another request under it throws", async () => {
  const { clock, scheduler } = setup();
  await scheduler.migrate();
  await scheduler.schedule({ dueAt: T0 + HOUR, target: "remind", tags: ["user:42"] });
  // times in words are read when the first start was made: sent again later, the same request
  const input = {
    kind: "cancel",
    filter: { tags: ["user:42"], dueTo: "in 2 hours" },
    key: "erase-request-42",
  } as const;
  const first = await scheduler.startOperation(input);
  expect(first).toMatchObject({ created: true, operation: { key: "erase-request-42" } });
  await clock.advance(60_000);
  const again = await scheduler.startOperation(input);
  expect(again).toEqual({ created: false, operation: first.operation });
  const done = await scheduler.runOperation(first.operation.id);
  expect(done).toMatchObject({ state: "done", changed: 1 });
  expect((await scheduler.startOperation(input)).operation).toEqual(done);

  for (const other of [
    { ...input, kind: "erase" },
    { ...input, filter: { tags: ["user:42"], dueTo: "in 3 hours" } },
    { ...input, filter: { tags: ["user:7"] } },
  ] as const) {
    const err = await scheduler.startOperation(other).catch((e: unknown) => e);
    expect(err, JSON.stringify(other)).toBeInstanceOf(OperationKeyConflictError);
    expect((err as OperationKeyConflictError).held.id).toBe(first.operation.id);
  }
  // another tenant's key is its own; a key is checked as a job's
  const theirs = await scheduler.startOperation(input, { tenant: "globex" });
  expect(theirs.created).toBe(true);
  for (const key of ["", "k".repeat(257), 42]) {
    const err = await scheduler.startOperation({ ...input, key } as never).catch((e: unknown) => e);
    expect((err as InvalidJobError).field).toBe("key");
  }
  const mine = await scheduler.listOperations({ tenant: first.operation.tenant });
  expect(mine.operations.map((o) => o.id)).toEqual([first.operation.id]);
});
