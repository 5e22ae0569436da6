import { afterEach, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { type Harness, describeOnEveryStore } from "../support/harness.js";

/**
 * Store work is kept off the timing wheel's fire instants (WheelDriver.quietFor): a claim, a
 * settle batch or an operation's batch that would still hold the event loop when the wheel next fires waits for
 * that fire, and the jobs of one instant all start before their settlements are written. On
 * a ManualClock no time passes inside a store call, so "would still hold it" is the margin
 * alone (2 ms): these tests place a pass 1 ms before a fire.
 */
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** Logs each call of `method` on the store instance as `label@clock time` when it is made. */
function logCalls(
  store: Store,
  method: "jobsClaimDue" | "jobsSettle" | "operationStep",
  log: string[],
  label: (args: never) => string,
): void {
  const target = store as unknown as Record<string, (p: never) => Promise<unknown>>;
  const original = target[method]!.bind(store);
  target[method] = (p: never) => {
    log.push(`${label(p)}@${h.clock.now() - T0}`);
    return original(p);
  };
}

describeOnEveryStore("Store work and fire instants", (make) => {
  it("a claim due 1 ms before the wheel fires runs right after that fire instead", async () => {
    h = await make();
    const log: string[] = [];
    h.scheduler.handle("t", (job) => {
      log.push(`fired ${(job.payload as { n: number }).n}@${h.clock.now() - T0}`);
    });
    await h.scheduler.schedule({ dueAt: T0 + 10_000, target: "t", payload: { n: 1 } });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 9500); // job 1 claimed at 9000, into the wheel
    // job 2 enters the horizon at 9999: the pass it wakes comes 1 ms before job 1's fire
    await h.scheduler.schedule({ dueAt: T0 + 10_999, target: "t", payload: { n: 2 } });
    logCalls(h.store, "jobsClaimDue", log, () => "claim");
    await h.clock.advanceTo(T0 + 9999);
    expect(log).toEqual([]); // on the old code: claim@9999, before job 1 fired
    await h.clock.advanceTo(T0 + 10_000);
    expect(log.slice(0, 2)).toEqual(["fired 1@10000", "claim@10000"]);
    await h.clock.advanceTo(T0 + 11_000);
    expect(log).toContain("fired 2@10999");
  });

  it("an operation's batch due 1 ms before the wheel fires runs right after that fire", async () => {
    h = await make();
    const log: string[] = [];
    h.scheduler.handle("t", () => void log.push(`fired@${h.clock.now() - T0}`));
    await h.scheduler.schedule({ dueAt: T0 + 10_000, target: "t" });
    const later = await h.scheduler.schedule({
      dueAt: T0 + 3_600_000,
      target: "t",
      tags: ["later"],
    });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 9999); // the first job claimed at 9000, into the wheel
    logCalls(h.store, "operationStep", log, () => "step");
    const { operation } = await h.scheduler.startOperation({
      kind: "cancel",
      filter: { tags: ["later"] },
    });
    await h.clock.advance(0); // the runner's pass, woken by the start
    expect(log).toEqual([]); // on the old code: step@9999, before the job fired
    await h.clock.advanceTo(T0 + 10_000);
    expect(log.slice(0, 2)).toEqual(["fired@10000", "step@10000"]);
    await h.clock.advance(10);
    expect(await h.scheduler.getOperation(operation.id)).toMatchObject({ state: "done" });
    expect(await h.scheduler.get(later.job.id)).toMatchObject({ status: "cancelled" });
  });

  it("a pass waiting for a fire does not hold up stop()", async () => {
    h = await make();
    h.scheduler.handle("t", () => {});
    await h.scheduler.schedule({ dueAt: T0 + 10_000, target: "t" });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 9500);
    const late = await h.scheduler.schedule({ dueAt: T0 + 10_999, target: "t" });
    await h.clock.advanceTo(T0 + 9999); // the pass now waits for the fire at 10000
    await h.scheduler.stop({ timeoutMs: 1000 });
    expect(await h.scheduler.get(late.job.id)).toMatchObject({ status: "pending" });
  });

  it("every job of one instant starts before any of their settlements is written", async () => {
    h = await make();
    const log: string[] = [];
    h.scheduler.handle("t", () => {
      log.push("h");
    });
    // more than a settle batch (1000): the old settler wrote the first 1000 mid-instant
    const n = 1200;
    await h.scheduler.scheduleMany(
      Array.from({ length: n }, (_, i) => ({ dueAt: T0 + 5000, target: "t", payload: { i } })),
    );
    logCalls(h.store, "jobsSettle", log, (p: { settlements: unknown[] }) => {
      return `settle ${p.settlements.length}`;
    });
    h.scheduler.start();
    await h.clock.advanceTo(T0 + 5000);
    await h.scheduler.idle();
    const firstSettle = log.findIndex((e) => e.startsWith("settle"));
    expect(log.filter((e) => e === "h")).toHaveLength(n);
    expect(firstSettle).toBe(n); // on the old code: 1000, with 200 jobs still to start
    expect((await h.scheduler.stats()).counts.succeeded).toBe(n);
  });
});
