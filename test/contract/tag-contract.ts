import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidJobError } from "../../src/core/errors.js";
import { createIdGenerator } from "../../src/core/ids.js";
import type { Job, NewJob } from "../../src/core/job.js";
import type { Store, TagListParams } from "../../src/store/store.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Tags, part of the store contract (run by describeStoreContract): a job's tags are kept on
 * it and in the tag index, listed and counted per tenant and tag (by status and due range),
 * replaced with the job by keyMode replace, removed with the job by retention, and refused
 * with nothing written when there are too many or one is too long.
 */
export function describeTagContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (tags): ${name}`, () => {
    let store: Store;
    let newId: () => string;

    beforeEach(async () => {
      store = await makeStore();
      await store.migrate();
      let clockForIds = T0;
      newId = createIdGenerator(() => clockForIds++);
    });
    afterEach(async () => {
      await store.close();
    });

    function job(over: Partial<NewJob> & { dueAt: number }): NewJob {
      return {
        id: newId(),
        tenant: "acme",
        key: null,
        payload: null,
        target: "t",
        targetOptions: null,
        maxAttempts: 3,
        expireAfterMs: null,
        ...over,
      };
    }

    /** Every job of a tag, walked page by page as a bulk operation does. */
    async function walk(p: Omit<TagListParams, "limit">, limit = 2): Promise<Job[]> {
      const out: Job[] = [];
      let afterId: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await store.jobsListByTag({ ...p, afterId, limit });
        out.push(...page.jobs);
        if (page.next === null) return out;
        afterId = page.next;
      }
      throw new Error("the walk did not end");
    }

    const ids = (jobs: readonly { id: string }[]) => jobs.map((j) => j.id);

    it("keeps tags on the job and lists and counts a tenant's jobs by tag, in id order", async () => {
      const tagged = [0, 1, 2, 3, 4].map((i) =>
        job({ dueAt: T0 + (5 - i) * HOUR, tags: i % 2 === 0 ? ["user:42", "x"] : ["user:42"] }),
      );
      const others = [
        job({ dueAt: T0 + HOUR, tags: ["user:7"] }),
        job({ dueAt: T0 + HOUR }),
        job({ dueAt: T0 + HOUR, tenant: "other", tags: ["user:42"] }),
      ];
      await store.jobsInsert({ jobs: [...tagged, ...others], now: T0 });

      expect((await store.jobGet({ id: tagged[0]!.id }))!.tags).toEqual(["user:42", "x"]);
      expect((await store.jobGet({ id: others[1]!.id }))!.tags).toEqual([]);
      const listed = await store.jobsList({ tenant: "acme", limit: 10 });
      expect(listed.find((j) => j.id === tagged[1]!.id)!.tags).toEqual(["user:42"]);

      const all = await walk({ tenant: "acme", tag: "user:42" });
      expect(ids(all)).toEqual(ids(tagged));
      expect(all[2]).toMatchObject({
        status: "pending",
        dueAt: T0 + 3 * HOUR,
        tags: ["user:42", "x"],
      });
      const first = await store.jobsListByTag({ tenant: "acme", tag: "user:42", limit: 2 });
      expect(first).toEqual({ jobs: [expect.anything(), expect.anything()], next: tagged[1]!.id });
      const end = await store.jobsListByTag({ tenant: "acme", tag: "user:42", limit: 9 });
      expect(end.next).toBeNull();
      expect(await store.jobsCountByTag({ tenant: "acme", tag: "user:42" })).toBe(5);
      expect(await store.jobsCountByTag({ tenant: "acme", tag: "x" })).toBe(3);
      expect(await store.jobsCountByTag({ tenant: "acme", tag: "nobody" })).toBe(0);
    });

    it("keeps tenants apart: the same tag of another tenant is neither listed nor counted", async () => {
      const mine = job({ dueAt: T0 + HOUR, tags: ["campaign:spring"] });
      const theirs = job({ dueAt: T0 + HOUR, tenant: "other", tags: ["campaign:spring"] });
      await store.jobsInsert({ jobs: [mine, theirs], now: T0 });
      expect(ids(await walk({ tenant: "acme", tag: "campaign:spring" }))).toEqual([mine.id]);
      expect(ids(await walk({ tenant: "other", tag: "campaign:spring" }))).toEqual([theirs.id]);
      expect(await store.jobsCountByTag({ tenant: "third", tag: "campaign:spring" })).toBe(0);
    });

    it("filters by status and due range, following claims, outcomes and moves", async () => {
      const due = [0, 1, 2, 3, 4].map((i) => job({ dueAt: T0 + i * 1000, tags: ["t"] }));
      const later = job({ dueAt: T0 + 2 * DAY, tags: ["t"] });
      await store.jobsInsert({ jobs: [...due, later], now: T0 });
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 1000 });
      const claimed = await store.jobsClaimDue({
        now: T0 + 2000,
        dueBefore: T0 + 2000,
        limit: 3,
        leaseMs: 60_000,
        owner: "n",
      });
      expect(ids(claimed)).toEqual(ids(due.slice(0, 3)));
      const [c0, c1] = claimed;
      await store.jobsSettle({
        now: T0 + 2500,
        settlements: [
          { id: c0!.id, fence: c0!.fence, firedAt: T0 + 2000, outcome: "succeeded", result: null },
          // a failed attempt moves the job to a new due time: the range follows it
          {
            id: c1!.id,
            fence: c1!.fence,
            firedAt: T0 + 2000,
            outcome: "retry",
            error: "boom",
            retryAt: T0 + DAY,
          },
        ],
      });
      await store.jobCancel({ id: due[3]!.id, now: T0 + 2600 });
      await store.jobReschedule({ id: due[4]!.id, dueAt: T0 + 3 * DAY, now: T0 + 2700 });

      const q = { tenant: "acme", tag: "t" };
      const count = (over: object) => store.jobsCountByTag({ ...q, ...over });
      expect(await count({ statuses: ["succeeded"] })).toBe(1);
      expect(await count({ statuses: ["claimed"] })).toBe(1);
      expect(await count({ statuses: ["cancelled"] })).toBe(1);
      expect(await count({ statuses: ["pending"] })).toBe(3);
      expect(await count({ statuses: ["pending", "claimed"] })).toBe(4);
      expect(await count({ statuses: [] })).toBe(0);
      expect(await count({ dueFrom: T0, dueTo: T0 + HOUR })).toBe(3);
      expect(await count({ dueFrom: T0 + DAY, dueTo: T0 + DAY + 1 })).toBe(1);
      expect(await count({ statuses: ["pending"], dueFrom: T0 + 2 * DAY })).toBe(2);

      const pending = await walk({ ...q, statuses: ["pending"] });
      expect(ids(pending)).toEqual([c1!.id, due[4]!.id, later.id]);
      expect(pending.map((j) => j.dueAt)).toEqual([T0 + DAY, T0 + 3 * DAY, T0 + 2 * DAY]);
      expect(ids(await walk({ ...q, dueFrom: T0 + 2 * DAY, dueTo: T0 + 3 * DAY }))).toEqual([
        later.id,
      ]);
      const done = await walk({ ...q, statuses: ["succeeded", "cancelled"] }, 1);
      expect(done.map((j) => [j.id, j.status])).toEqual([
        [c0!.id, "succeeded"],
        [due[3]!.id, "cancelled"],
      ]);
    });

    it("gives a replaced job the new job's tags", async () => {
      const first = job({ dueAt: T0 + HOUR, key: "k", tags: ["old", "both"] });
      await store.jobsInsert({ jobs: [first], now: T0 });
      const [r] = await store.jobsInsert({
        jobs: [job({ dueAt: T0 + 5 * HOUR, key: "k", keyMode: "replace", tags: ["both", "new"] })],
        now: T0 + 1,
      });
      expect(r).toMatchObject({
        outcome: "replaced",
        job: { id: first.id, tags: ["both", "new"] },
      });
      expect(await store.jobsCountByTag({ tenant: "acme", tag: "old" })).toBe(0);
      for (const tag of ["both", "new"]) {
        const page = await walk({ tenant: "acme", tag, dueFrom: T0 + 5 * HOUR });
        expect(page.map((j) => [j.id, j.dueAt])).toEqual([[first.id, T0 + 5 * HOUR]]);
      }
      await store.jobsInsert({
        jobs: [job({ dueAt: T0 + 6 * HOUR, key: "k", keyMode: "replace" })],
        now: T0 + 2,
      });
      expect((await store.jobGet({ id: first.id }))!.tags).toEqual([]);
      expect(await store.jobsCountByTag({ tenant: "acme", tag: "both" })).toBe(0);
    });

    it("removes the tag entries of jobs retention deletes, and only theirs", async () => {
      const jobs = [0, 1, 2].map(() => job({ dueAt: T0, tags: ["gone", "shared"] }));
      const kept = job({ dueAt: T0 + HOUR, tags: ["shared"] });
      await store.jobsInsert({ jobs: [...jobs, kept], now: T0 });
      for (const j of jobs) await store.jobCancel({ id: j.id, now: T0 + 10 });
      // a row delete first (the finish period is not over), then whatever is left
      expect(await store.historyPurge({ before: T0 + 11, limit: 1 })).toBe(1);
      expect(await store.jobsCountByTag({ tenant: "acme", tag: "gone" })).toBe(2);
      let purged = 1;
      for (let n = -1; n !== 0; purged += n) {
        n = await store.historyPurge({ before: T0 + 30 * DAY, limit: 10 });
      }
      expect(purged).toBe(3);
      expect(await store.jobsCountByTag({ tenant: "acme", tag: "gone" })).toBe(0);
      expect(await walk({ tenant: "acme", tag: "gone" })).toEqual([]);
      expect(ids(await walk({ tenant: "acme", tag: "shared" }))).toEqual([kept.id]);
    });

    it("refuses too many, too long or blank tags naming the field, with nothing written", async () => {
      const ok = job({ dueAt: T0 + HOUR, tags: ["fine"] });
      const bad: [string[], string][] = [
        [Array.from({ length: 17 }, (_, i) => `t${i}`), "jobs[1].tags"],
        [["fine", "x".repeat(65)], "jobs[1].tags[1]"],
        [["has space"], "jobs[1].tags[0]"],
        [[""], "jobs[1].tags[0]"],
        [["a", "a"], "jobs[1].tags[1]"],
      ];
      for (const [tags, field] of bad) {
        const err = await store
          .jobsInsert({ jobs: [ok, job({ dueAt: T0 + HOUR, tags })], now: T0 })
          .then(
            () => null,
            (e: unknown) => e,
          );
        expect(err).toBeInstanceOf(InvalidJobError);
        expect((err as InvalidJobError).field).toBe(field);
      }
      expect(await store.jobGet({ id: ok.id })).toBeNull();
      expect(await store.jobsCountByTag({ tenant: "acme", tag: "fine" })).toBe(0);
      expect((await store.jobsCountByStatus({})).pending).toBe(0);
      const sixteen = Array.from({ length: 16 }, (_, i) => `${"y".repeat(62)}${i}`);
      await store.jobsInsert({ jobs: [job({ dueAt: T0 + HOUR, tags: sixteen })], now: T0 });
      expect(await store.jobsCountByTag({ tenant: "acme", tag: sixteen[15]! })).toBe(1);
    });
  });
}
