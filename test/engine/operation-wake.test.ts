import { afterEach, expect, it } from "vitest";
import { PermanentJobError } from "../../src/engine/handler-errors.js";
import { type Harness, describeOnEveryStore } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/**
 * A bulk operation that makes jobs due sooner wakes this node's watcher, as a single retry or
 * reschedule does: with an hour's idle sleep planned, the jobs fire when the batch that moved
 * them is written, not at the next poll.
 */
describeOnEveryStore("bulk operations wake the watcher", (make) => {
  it("a bulk retry of dead jobs fires them at once", async () => {
    h = await make({ maxIdleMs: HOUR });
    let fail = true;
    const fired: number[] = [];
    h.scheduler.handle("mail", () => {
      fired.push(h.clock.now());
      if (fail) throw new PermanentJobError("down");
    });
    await h.scheduler.schedule({ dueAt: T0 + 10, target: "mail", tags: ["user:42"] });
    await h.scheduler.schedule({ dueAt: T0 + 20 * HOUR, target: "mail" });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 10);
    expect(fired).toEqual([T0 + 10]);
    fail = false;
    await h.clock.advance(1000);
    const { operation: op } = await h.scheduler.startOperation({
      kind: "retry",
      filter: { tags: ["user:42"] },
    });
    await h.clock.advance(10);
    expect((await h.scheduler.getOperation(op.id))!).toMatchObject({ state: "done", changed: 1 });
    await h.clock.advance(1000);
    expect(fired.length).toBe(2);
    expect(fired[1]!).toBeLessThanOrEqual(T0 + 2100);
  });

  it("a bulk reschedule to a sooner time fires the jobs then", async () => {
    h = await make({ maxIdleMs: HOUR });
    const fired: number[] = [];
    h.scheduler.handle("mail", () => void fired.push(h.clock.now()));
    await h.scheduler.schedule({ dueAt: T0 + 10, target: "mail" });
    await h.scheduler.schedule({ dueAt: T0 + 3 * HOUR, target: "mail", tags: ["user:7"] });
    h.scheduler.start();
    // the watcher fired the first job and now sleeps its hour
    await h.clock.advanceTo(T0 + 10);
    expect(fired).toEqual([T0 + 10]);
    await h.scheduler.startOperation({
      kind: "reschedule",
      filter: { tags: ["user:7"] },
      dueAt: T0 + 5000,
    });
    await h.clock.advanceTo(T0 + 5000);
    expect(fired).toEqual([T0 + 10, T0 + 5000]);
  });
});
