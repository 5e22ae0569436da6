import { describe, expect, it } from "vitest";
import { ActivityRecorder } from "../../src/api/activity.js";
import { describeOnEveryStore } from "../support/harness.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

describe("ActivityRecorder", () => {
  it("keeps per-minute counts and lateness per tenant and overall", () => {
    const a = new ActivityRecorder(5);
    a.record({ kind: "succeeded", tenant: "x", at: T0 + 1000 }, 3);
    a.record({ kind: "succeeded", tenant: "y", at: T0 + 2000 }, 9);
    a.record({ kind: "dead", tenant: "x", at: T0 + 61_000 }, 0);
    const all = a.minutes(T0 + 61_000, 3);
    expect(all.map((m) => [m.minute - T0, m.succeeded, m.dead])).toEqual([
      [-60_000, 0, 0],
      [0, 2, 0],
      [60_000, 0, 1],
    ]);
    expect(all[1]!.latenessMax).toBe(9);
    expect(a.minutes(T0 + 61_000, 3, "x").map((m) => m.succeeded)).toEqual([0, 1, 0]);
    expect(a.lateness(T0 + 61_000, 2, "y")).toMatchObject({ count: 1, max: 9 });
    // old minutes fall out of the window
    a.record({ kind: "succeeded", tenant: "x", at: T0 + 10 * 60_000 }, 1);
    expect(a.lateness(T0 + 10 * 60_000, 60)).toMatchObject({ count: 1 });
  });
});

describeOnEveryStore("ActivityRecorder in a scheduler", (make) => {
  it("is fed by the scheduler's outcomes", async () => {
    const h = await make();
    try {
      h.scheduler.handle("t", () => undefined);
      await h.scheduler.scheduleMany([
        { dueAt: T0 + 5, target: "t" },
        { dueAt: T0 + 5, target: "nope" },
      ]);
      h.scheduler.start();
      await h.clock.advance(10);
      const [m] = h.scheduler.activity.minutes(h.clock.now(), 1);
      // `fired`: the deprecated alias of `succeeded`, the same count for one release
      expect(m).toMatchObject({ succeeded: 1, fired: 1, dead: 1, latenessMax: 0 });
    } finally {
      await h.close();
    }
  });
});
