import { afterEach, describe, expect, it } from "vitest";
import { InvalidJobError } from "../../src/core/errors.js";
import { makeHarness } from "../support/harness.js";

/**
 * Issue 13 §2 on the library: schedule({ tags }), list({ tag }) paging a tag's jobs in id
 * order from the tag index, countJobs({ tag, status }), in the caller's tenant; bad tags
 * refused naming the field.
 */

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const MINUTE = 60_000;

let h: ReturnType<typeof makeHarness>;
afterEach(async () => {
  await h?.close();
});

describe("tags on the library", () => {
  it("schedules with tags, lists and counts by tag within a tenant", async () => {
    h = makeHarness({ start: T0 });
    const s = h.scheduler;
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await s.schedule({ delayMs: (10 - i) * MINUTE, target: "t", tags: ["user:42"] });
      expect(r.job.tags).toEqual(["user:42"]);
      ids.push(r.job.id);
    }
    await s.schedule({ delayMs: MINUTE, target: "t", tags: ["user:42"], tenant: "other" });
    await s.schedule({ delayMs: MINUTE, target: "t" });
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await s.list({ tag: "user:42", limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...page.jobs.map((j) => j.id));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(ids);
    await s.cancel(ids[2]!);
    expect(await s.countJobs({ tag: "user:42" })).toBe(7);
    expect(await s.countJobs({ tag: "user:42", status: "pending" })).toBe(6);
    expect(await s.countJobs({ tag: "user:42", status: ["cancelled"] })).toBe(1);
    expect(await s.countJobs({ tag: "user:42", dueTo: T0 + 5 * MINUTE + 1 })).toBe(2);
    expect(await s.countJobs({ tag: "user:42", tenant: "other" })).toBe(1);
    const cancelled = await s.list({ tag: "user:42", status: "cancelled" });
    expect(cancelled.jobs.map((j) => j.id)).toEqual([ids[2]]);
    expect((await s.get(ids[0]!))!.tags).toEqual(["user:42"]);
  });

  it("refuses bad tags and a cursor of another listing, naming the field", async () => {
    h = makeHarness({ start: T0 });
    const s = h.scheduler;
    const bad = await s
      .schedule({ delayMs: MINUTE, target: "t", tags: ["a", "a"] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidJobError);
    expect((bad as InvalidJobError).field).toBe("tags[1]");
    const notList = await s
      .schedule({ delayMs: MINUTE, target: "t", tags: "user:42" as unknown as string[] })
      .catch((e: unknown) => e);
    expect((notList as InvalidJobError).field).toBe("tags");
    await s.schedule({ delayMs: MINUTE, target: "t" });
    await s.schedule({ delayMs: MINUTE, target: "t" });
    const byDue = await s.list({ limit: 1 });
    const wrong = await s.list({ tag: "x", cursor: byDue.nextCursor! }).catch((e: unknown) => e);
    expect((wrong as InvalidJobError).field).toBe("cursor");
    const noTag = await s.countJobs({} as { tag: string }).catch((e: unknown) => e);
    expect((noTag as InvalidJobError).field).toBe("tag");
  });
});
