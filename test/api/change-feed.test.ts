import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { ChangeCursorExpiredError, InvalidJobError } from "../../src/core/errors.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { tempDir } from "../support/temp-dir.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Two schedulers (two processes' worth) on one SQLite file, one manual clock. */
function twoOnOneFile(opts: { changeRetentionMs?: number } = {}) {
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  const clock = new ManualClock(T0);
  const open = () => {
    const store = new SqliteStore({ path: join(dir.path, "jobs.db") });
    const scheduler = new Scheduler({ store, clock, logger: silentLogger, ...opts });
    cleanups.push(async () => {
      await scheduler.stop({ timeoutMs: 1000 });
      await store.close();
    });
    return scheduler;
  };
  return { clock, firing: open(), watching: open() };
}

it("shows one scheduler the work another one fired, resumable from any cursor", async () => {
  const { clock, firing, watching } = twoOnOneFile();
  await watching.migrate();
  const start = await watching.changesHead({ tenant: "acme" });
  firing.handle("ok", () => "done");
  firing.handle("fail", () => {
    throw new Error("nope");
  });
  const [a, b] = await firing.scheduleMany([
    { dueAt: T0 + 10, target: "ok", tenant: "acme" },
    { dueAt: T0 + 20, target: "fail", tenant: "acme", maxAttempts: 1 },
  ]);
  await firing.schedule({ dueAt: T0 + 10, target: "ok", tenant: "other" });
  firing.start();
  await clock.advanceTo(T0 + 1000);
  await firing.idle();

  const page = await watching.changes({ tenant: "acme", after: start });
  const kindsOf = (id: string) => page.changes.filter((c) => c.id === id).map((c) => c.kind);
  expect(page.changes).toHaveLength(6);
  expect(page.changes.every((c) => c.tenant === "acme")).toBe(true);
  expect(kindsOf(a!.job.id)).toEqual(["scheduled", "claimed", "succeeded"]);
  expect(kindsOf(b!.job.id)).toEqual(["scheduled", "claimed", "dead"]);
  expect(page.changes.at(-1)).toMatchObject({
    status: "dead",
    error: expect.stringContaining("nope"),
  });
  // Resuming from the middle gives the rest, nothing twice.
  const rest = await watching.changes({ tenant: "acme", after: page.changes[2]!.cursor, limit: 2 });
  expect(rest.changes).toEqual(page.changes.slice(3, 5));
  const last = await watching.changes({ tenant: "acme", after: rest.next });
  expect(last.changes).toEqual(page.changes.slice(5));
  expect((await watching.changes({ tenant: "acme", after: last.next })).changes).toEqual([]);
});

it("refuses a bad cursor or limit naming the field, and an expired cursor saying where to resume", async () => {
  const { clock, firing, watching } = twoOnOneFile({ changeRetentionMs: 60_000 });
  await expect(watching.changes({ after: "12abc" })).rejects.toThrow(InvalidJobError);
  await expect(watching.changes({ after: "12abc" })).rejects.toThrow(
    /^after: expected a change cursor/,
  );
  await expect(watching.changes({ limit: 0 })).rejects.toThrow(/^limit: expected/);
  await expect(watching.changes({ limit: 1001 })).rejects.toThrow(/^limit: expected/);
  const old = await watching.changesHead();
  await firing.schedule({ dueAt: T0 + 3_600_000, target: "x" });
  await clock.advance(120_000);
  await firing.schedule({ dueAt: T0 + 3_600_000, target: "x" });
  expect(await firing.purgeChanges()).toBe(1);
  const err = await watching.changes({ after: old }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ChangeCursorExpiredError);
  const again = await watching.changes({ after: (err as ChangeCursorExpiredError).oldest });
  expect(again.changes).toHaveLength(1);
});
