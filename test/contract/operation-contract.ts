import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import {
  newOperation,
  type Operation,
  type OperationFilter,
  type OperationKind,
  type OperationParams,
} from "../../src/core/operation.js";
import { withCallback } from "../../src/engine/callbacks.js";
import type { Store } from "../../src/store/store.js";
import { operationRunAll } from "../support/store-steps.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

/**
 * Bulk operations, part of the store contract (run by describeStoreContract): each batch
 * acts on the jobs after the record's cursor and advances it in one transaction, so an
 * operation run in many small batches (or resumed from its stored record) acts on each
 * matching job exactly once, with the single-job transitions' feed rows and counters.
 */
export function describeOperationContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (bulk operations): ${name}`, () => {
    let store: Store;
    let newId: () => string;
    let opIds: () => string;

    beforeEach(async () => {
      store = await makeStore();
      let idClock = T0;
      newId = createIdGenerator(() => idClock++);
      let opClock = T0;
      opIds = createIdGenerator(() => opClock++);
    });
    afterEach(async () => {
      await store.close();
    });

    function job(over: Partial<NewJob> = {}): NewJob {
      return {
        id: newId(),
        tenant: "acme",
        key: null,
        dueAt: T0 + HOUR,
        payload: null,
        target: "remind",
        targetOptions: null,
        maxAttempts: 1,
        expireAfterMs: null,
        ...over,
      };
    }

    async function insert(jobs: NewJob[]) {
      return (await store.jobsInsert({ jobs, now: T0 })).map((r) => r.job);
    }

    function record(over: Partial<Operation> = {}): Operation {
      const def = { id: opIds(), tenant: "acme", kind: "count" as const, params: {} };
      return { ...newOperation({ ...def, filter: { all: true } }, T0), ...over };
    }

    async function start(
      kind: OperationKind,
      filter: OperationFilter,
      params: OperationParams = {},
      tenant = "acme",
    ): Promise<Operation> {
      const r = await store.operationsInsert({
        operation: newOperation({ id: opIds(), tenant, kind, filter, params }, T0),
      });
      return r.operation;
    }

    /** Runs every batch of `limit` jobs; resolves to the final record and the batches run. */
    const runAll = (id: string, limit: number, now = T0 + 1000) =>
      operationRunAll(store, id, limit, now);

    async function kinds(ids: readonly string[]) {
      const page = await store.changesRead({ tenant: "acme", limit: 10_000 });
      const seen = new Map<string, string[]>();
      for (const c of page.changes) {
        if (!ids.includes(c.id)) continue;
        seen.set(c.id, [...(seen.get(c.id) ?? []), c.kind]);
      }
      return seen;
    }

    async function claimOne(id: string, now = T0 + 2 * HOUR) {
      await store.bucketsStage({ until: now + HOUR, maxRows: 100_000 });
      const claimed = await store.jobsClaimDue({
        now,
        dueBefore: now,
        limit: 1000,
        leaseMs: 60_000,
        owner: "n",
      });
      return claimed.find((c) => c.id === id)!;
    }

    it("cancels the matching pending jobs once each over many batches, skipping claimed ones and other tenants", async () => {
      const soon = await insert([job({ dueAt: T0 + 10 })]);
      const mine = await insert(Array.from({ length: 7 }, () => job()));
      const others = await insert([job({ target: "other" }), job({ tenant: "globex" })]);
      const claimed = await claimOne(soon[0]!.id, T0 + 100);
      const op = await start("cancel", { target: "remind" });
      const { op: done, batches } = await runAll(op.id, 3);
      expect(batches).toBe(4); // 10 acme jobs in batches of 3: the fourth comes back short
      expect(done).toMatchObject({ state: "done", scanned: 9, changed: 7, skipped: 1 });
      expect(done.finishedAt).toBe(T0 + 1000);
      for (const j of mine)
        expect(await store.jobGet({ id: j.id })).toMatchObject({ status: "cancelled" });
      expect(await store.jobGet({ id: claimed.id })).toMatchObject({ status: "claimed" });
      for (const j of others)
        expect(await store.jobGet({ id: j.id })).toMatchObject({ status: "pending" });
      const feed = await kinds(mine.map((j) => j.id));
      for (const j of mine) expect(feed.get(j.id)).toEqual(["scheduled", "cancelled"]);
      expect(await store.jobsCountByStatus({ tenant: "acme" })).toMatchObject({
        pending: 1,
        cancelled: 7,
        claimed: 1,
      });
    });

    it("a batch cancelling jobs of many buckets, some staged, leaves exact counters and no due entry", async () => {
      // one batch of 40: 10 due in the first hour (staged, so in the due index) and 30 over
      // 30 later hours, beside a job of the first hour that stays
      const staged = await insert(
        Array.from({ length: 10 }, (_, i) => job({ dueAt: T0 + 10 + i })),
      );
      const later = await insert(
        Array.from({ length: 30 }, (_, i) => job({ dueAt: T0 + (i + 2) * HOUR + i })),
      );
      const [stays] = await insert([job({ target: "other", dueAt: T0 + 500 })]);
      await store.bucketsStage({ until: T0 + 1000, maxRows: 100_000 });
      expect((await store.jobsNextDue({ now: T0 })).earliestDue).toBe(T0 + 10);
      const op = await start("cancel", { target: "remind" });
      const { op: done, batches } = await runAll(op.id, 50);
      expect(batches).toBe(1);
      expect(done).toMatchObject({ state: "done", scanned: 41, changed: 40, skipped: 0 });
      // the cancelled jobs' due entries went with them: the earliest is the job that stays
      expect((await store.jobsNextDue({ now: T0 })).earliestDue).toBe(stays!.dueAt);
      const counts = await store.bucketsCounts({ from: T0 - HOUR, to: T0 + 40 * HOUR });
      // one counter left, the emptied buckets' rows gone
      expect(counts.map((c) => c.pending)).toEqual([1]);
      expect(await store.jobsCountByStatus({ tenant: "acme" })).toMatchObject({
        pending: 1,
        cancelled: 40,
      });
      const all = [...staged, ...later];
      for (const j of all) {
        expect(await store.jobGet({ id: j.id })).toMatchObject({
          status: "cancelled",
          version: j.version + 1,
          attempts: 0,
        });
      }
      const page = await store.changesRead({ tenant: "acme", limit: 1000 });
      const cancels = page.changes.filter((c) => c.kind === "cancelled");
      expect(cancels.map((c) => c.id)).toEqual(all.map((j) => j.id));
      expect(cancels.every((c) => c.status === "cancelled")).toBe(true);
      expect(cancels.map((c) => c.dueAt)).toEqual(all.map((j) => j.dueAt));
    });

    it("resumes from the stored cursor: a record read back continues where the last batch ended", async () => {
      const jobs = await insert(Array.from({ length: 5 }, () => job()));
      const op = await start("reschedule", { status: ["pending"] }, { shiftMs: 60_000 });
      const first = await store.operationStep({ id: op.id, now: T0 + 1, limit: 2 });
      expect(first!.operation).toMatchObject({ state: "running", scanned: 2, changed: 2 });
      expect(first!.operation.cursor).not.toBeNull();
      const stored = await store.operationGet({ id: op.id });
      expect(stored).toEqual(first!.operation);
      const { op: done } = await runAll(op.id, 2);
      expect(done).toMatchObject({ state: "done", scanned: 5, changed: 5, skipped: 0 });
      // shifted once each, although each moved past the cursor's due time
      for (const j of jobs) {
        expect(await store.jobGet({ id: j.id })).toMatchObject({
          status: "pending",
          dueAt: T0 + HOUR + 60_000,
          version: 2,
        });
      }
      const feed = await kinds(jobs.map((j) => j.id));
      for (const j of jobs) expect(feed.get(j.id)).toEqual(["scheduled", "rescheduled"]);
    });

    it("reschedules to a set time and filters by due range and key prefix", async () => {
      const hit = await insert([
        job({ key: "user:42:standup", dueAt: T0 + HOUR }),
        job({ key: "user:42:lunch", dueAt: T0 + 2 * HOUR }),
      ]);
      const miss = await insert([
        job({ key: "user:7:standup", dueAt: T0 + HOUR }),
        job({ key: "user:42:late", dueAt: T0 + 5 * HOUR }),
        job({ dueAt: T0 + HOUR }),
      ]);
      const op = await start(
        "reschedule",
        { keyPrefix: "user:42:", dueFrom: T0, dueTo: T0 + 3 * HOUR },
        { dueAt: T0 + 10 * HOUR },
      );
      const { op: done } = await runAll(op.id, 100);
      expect(done).toMatchObject({ state: "done", scanned: 5, changed: 2, skipped: 0 });
      for (const j of hit) expect((await store.jobGet({ id: j.id }))!.dueAt).toBe(T0 + 10 * HOUR);
      for (const j of miss) expect((await store.jobGet({ id: j.id }))!.dueAt).toBe(j.dueAt);
    });

    it("retries dead jobs with a fresh attempt budget; one whose key a live job took stays dead", async () => {
      const [a, b] = await insert([job({ dueAt: T0 + 10 }), job({ dueAt: T0 + 20, key: "k" })]);
      await store.bucketsStage({ until: T0 + HOUR, maxRows: 1000 });
      const claimed = await store.jobsClaimDue({
        now: T0 + 100,
        dueBefore: T0 + 100,
        limit: 10,
        leaseMs: 60_000,
        owner: "n",
      });
      await store.jobsSettle({
        now: T0 + 200,
        settlements: claimed.map((c) => ({
          id: c.id,
          fence: c.fence,
          firedAt: T0 + 100,
          outcome: "dead" as const,
          error: "boom",
        })),
      });
      const [holder] = await insert([job({ key: "k" })]);
      const op = await start("retry", { status: ["dead"] }, { dueAt: T0 + 5 * HOUR });
      const { op: done } = await runAll(op.id, 1);
      expect(done).toMatchObject({ state: "done", scanned: 3, changed: 1, skipped: 1 });
      expect(await store.jobGet({ id: a!.id })).toMatchObject({
        status: "pending",
        attempts: 0,
        dueAt: T0 + 5 * HOUR,
      });
      expect(await store.jobGet({ id: b!.id })).toMatchObject({ status: "dead" });
      expect(await store.jobGet({ id: holder!.id })).toMatchObject({ status: "pending" });
      expect((await kinds([a!.id])).get(a!.id)).toEqual([
        "scheduled",
        "claimed",
        "dead",
        "retried",
      ]);
    });

    it("erases live and finished jobs with their feed rows and keys; claimed ones are left", async () => {
      const [pending, finished, firing] = await insert([
        job({ key: "erase-me" }),
        job({ dueAt: T0 + 10 }),
        job({ dueAt: T0 + 20 }),
      ]);
      await store.jobCancel({ id: finished!.id, now: T0 + 5 });
      await claimOne(firing!.id, T0 + 100);
      const [kept] = await insert([job({ target: "keep" })]);
      const op = await start("erase", { target: "remind" });
      const { op: done } = await runAll(op.id, 2);
      expect(done).toMatchObject({ state: "done", scanned: 4, changed: 2, skipped: 1 });
      expect(await store.jobGet({ id: pending!.id })).toBeNull();
      expect(await store.jobGet({ id: finished!.id })).toBeNull();
      expect(await store.jobGet({ id: firing!.id })).toMatchObject({ status: "claimed" });
      expect(await store.jobGet({ id: kept!.id })).toMatchObject({ status: "pending" });
      const feed = await kinds([pending!.id, finished!.id, firing!.id]);
      expect(feed.has(pending!.id)).toBe(false);
      expect(feed.has(finished!.id)).toBe(false);
      expect(feed.get(firing!.id)).toEqual(["scheduled", "claimed"]);
      expect(await store.jobGetByKey({ tenant: "acme", key: "erase-me" })).toBeNull();
      const [again] = await store.jobsInsert({ jobs: [job({ key: "erase-me" })], now: T0 + 1 });
      expect(again!.outcome).toBe("created");
      expect(await store.jobsCountByStatus({ tenant: "acme" })).toMatchObject({
        pending: 2,
        cancelled: 0,
        claimed: 1,
      });
      const counts = await store.bucketsCounts({ from: T0, to: T0 + 10 * HOUR, tenant: "acme" });
      expect(counts.reduce((n, b) => n + b.pending, 0)).toBe(2);
    });

    it("counts without changing anything: every match, or what a kind would change", async () => {
      const jobs = await insert([job(), job(), job({ dueAt: T0 + 10 })]);
      await store.jobCancel({ id: jobs[2]!.id, now: T0 + 1 });
      const all = await runAll((await start("count", { target: "remind" })).id, 2);
      expect(all.op).toMatchObject({ state: "done", changed: 3, skipped: 0 });
      const cancels = await runAll(
        (await start("count", { target: "remind" }, { of: "cancel" })).id,
        2,
      );
      expect(cancels.op).toMatchObject({ state: "done", changed: 2, skipped: 1 });
      expect(await store.jobsCountByStatus({ tenant: "acme" })).toMatchObject({
        pending: 2,
        cancelled: 1,
      });
    });

    it("matches jobs carrying every tag of the filter", async () => {
      const [both, one, none] = await insert([
        job({ tags: ["user:42", "campaign:spring"] }),
        job({ tags: ["user:42"] }),
        job(),
      ]);
      const { op } = await runAll(
        (await start("cancel", { tags: ["user:42", "campaign:spring"] })).id,
        2,
      );
      // the first tag's entries are read (2), the second tag checked on each job
      expect(op).toMatchObject({ state: "done", scanned: 2, changed: 1, skipped: 0 });
      expect(await store.jobGet({ id: both!.id })).toMatchObject({ status: "cancelled" });
      for (const j of [one!, none!]) {
        expect(await store.jobGet({ id: j.id })).toMatchObject({ status: "pending" });
      }
    });

    it("a tag filter reads the tag's entries, not the tenant's jobs, and moves each tagged job once", async () => {
      const tagged: string[] = [];
      for (let i = 0; i < 6; i++) {
        await insert(Array.from({ length: 5 }, () => job()));
        const [t] = await insert([job({ tags: ["user:42"], dueAt: T0 + HOUR + i })]);
        tagged.push(t!.id);
      }
      await insert([job({ tenant: "globex", tags: ["user:42"] })]);
      const dead = tagged[5]!;
      await store.jobCancel({ id: dead, now: T0 + 1 });
      const op = await start("reschedule", { tags: ["user:42"] }, { shiftMs: 60_000 });
      const { op: done, batches } = await runAll(op.id, 1);
      // 6 entries of the tag read one a batch (the seventh comes back empty), none of the 30
      // untagged jobs and not globex's: a walk of the tenant's jobs would read 36
      expect(batches).toBe(7);
      expect(done).toMatchObject({ state: "done", scanned: 6, changed: 5, skipped: 1 });
      for (const [i, id] of tagged.slice(0, 5).entries()) {
        expect(await store.jobGet({ id })).toMatchObject({
          status: "pending",
          dueAt: T0 + HOUR + i + 60_000,
          version: 2,
        });
      }
      expect(await store.jobGet({ id: dead })).toMatchObject({ status: "cancelled" });
      const count = await runAll((await start("count", { tags: ["user:42"] })).id, 4);
      expect(count.op).toMatchObject({ state: "done", scanned: 6, changed: 6 });
    });

    it("an erase by tag erases the callback jobs of the tagged jobs too: they carry the tags", async () => {
      const callbacks = { onSuccess: "https://hooks.example.com/ok" };
      const [tagged, other] = await insert([
        job({ dueAt: T0 + 10, tags: ["user:42"], callbacks }),
        job({ dueAt: T0 + 20, callbacks }),
      ]);
      const first = await claimOne(tagged!.id, T0 + 100); // claims both
      const now = T0 + 200;
      for (const claimed of [first, await store.jobGet({ id: other!.id })]) {
        const st = withCallback(
          claimed!,
          {
            id: claimed!.id,
            fence: claimed!.fence,
            firedAt: T0 + 100,
            outcome: "succeeded",
            result: 1,
          },
          now,
          newId,
        );
        expect(await store.jobsSettle({ now, settlements: [st] })).toEqual([true]);
      }
      const all = await store.jobsList({ tenant: "acme", limit: 100 });
      const cbOf = (id: string) => all.find((j) => j.callbackOf === id)!;
      expect(cbOf(tagged!.id)).toMatchObject({ status: "pending", tags: ["user:42"] });
      expect(cbOf(other!.id).tags).toEqual([]);
      const page = await store.jobsListByTag({ tenant: "acme", tag: "user:42", limit: 10 });
      expect(page.jobs.map((j) => j.id)).toEqual([tagged!.id, cbOf(tagged!.id).id]);

      const { op } = await runAll((await start("erase", { tags: ["user:42"] })).id, 1);
      expect(op).toMatchObject({ state: "done", scanned: 2, changed: 2, skipped: 0 });
      expect(await store.jobGet({ id: tagged!.id })).toBeNull();
      expect(await store.jobGet({ id: cbOf(tagged!.id).id })).toBeNull();
      expect(await store.jobGet({ id: other!.id })).toMatchObject({ status: "succeeded" });
      expect(await store.jobGet({ id: cbOf(other!.id).id })).toMatchObject({ status: "pending" });
    });

    it("a cancelled operation runs no further batch", async () => {
      const jobs = await insert(Array.from({ length: 4 }, () => job()));
      const op = await start("cancel", { all: true });
      await store.operationStep({ id: op.id, now: T0 + 1, limit: 2 });
      const cancelled = await store.operationCancel({ id: op.id, now: T0 + 2 });
      expect(cancelled).toMatchObject({ state: "cancelled", changed: 2, finishedAt: T0 + 2 });
      const after = await store.operationStep({ id: op.id, now: T0 + 3, limit: 2 });
      expect(after).toMatchObject({ scanned: 0, operation: { state: "cancelled", changed: 2 } });
      const statuses = await Promise.all(
        jobs.map(async (j) => (await store.jobGet({ id: j.id }))!.status),
      );
      // the store's own order (SQLite: insertion; PostgreSQL: shard, id): two of each
      expect(statuses.sort()).toEqual(["cancelled", "cancelled", "pending", "pending"]);
      // cancelling again (or a finished one) answers it as it is
      expect(await store.operationCancel({ id: op.id, now: T0 + 4 })).toMatchObject({
        state: "cancelled",
        finishedAt: T0 + 2,
      });
      expect(await store.operationCancel({ id: "nope", now: T0 })).toBeNull();
    });

    it("leaves a series' pending occurrence to its series", async () => {
      const [occurrence, plain] = await insert([
        job({ scheduleId: "S1", nominal: "2026-03-01T11:00" }),
        job(),
      ]);
      const { op } = await runAll((await start("cancel", { target: "remind" })).id, 10);
      expect(op).toMatchObject({ changed: 1, skipped: 1 });
      expect(await store.jobGet({ id: occurrence!.id })).toMatchObject({ status: "pending" });
      expect(await store.jobGet({ id: plain!.id })).toMatchObject({ status: "cancelled" });
    });

    it("gets and lists records per tenant, newest first", async () => {
      const a = await start("count", { all: true });
      const b = await start("cancel", { target: "x" });
      const c = await start("count", { all: true }, {}, "globex");
      expect(await store.operationGet({ id: a.id, tenant: "globex" })).toBeNull();
      expect(await store.operationGet({ id: c.id, tenant: "globex" })).toEqual(c);
      const acme = await store.operationsList({ tenant: "acme", limit: 10 });
      expect(acme.map((o) => o.id)).toEqual([b.id, a.id]);
      const page2 = await store.operationsList({ tenant: "acme", beforeId: b.id, limit: 10 });
      expect(page2.map((o) => o.id)).toEqual([a.id]);
      await runAll(a.id, 10);
      const active = await store.operationsList({ states: ["queued", "running"], limit: 10 });
      expect(active.map((o) => o.id).sort()).toEqual([b.id, c.id].sort());
      expect(b.filter).toEqual({ target: "x" });
    });

    it("a key is held by one record per tenant: inserting it again stores nothing and answers the first", async () => {
      const first = record({ key: "erase:user:42", kind: "erase", filter: { tags: ["user:42"] } });
      expect(await store.operationsInsert({ operation: first })).toEqual({
        operation: first,
        created: true,
      });
      const retry = record({ key: "erase:user:42", kind: "cancel", createdAt: T0 + 5 });
      expect(await store.operationsInsert({ operation: retry })).toEqual({
        operation: first,
        created: false,
      });
      expect(await store.operationGet({ id: retry.id })).toBeNull();
      // held for the record's life: a finished one still answers
      await runAll(first.id, 10);
      const done = (await store.operationGet({ id: first.id }))!;
      expect(done.state).toBe("done");
      expect(await store.operationsInsert({ operation: record({ key: "erase:user:42" }) })).toEqual(
        { operation: done, created: false },
      );
      // another tenant's key, and records without a key, are their own
      const other = record({ key: "erase:user:42", tenant: "globex" });
      expect((await store.operationsInsert({ operation: other })).created).toBe(true);
      for (let i = 0; i < 2; i++) {
        expect((await store.operationsInsert({ operation: record() })).created).toBe(true);
      }
      const acme = await store.operationsList({ tenant: "acme", limit: 10 });
      expect(acme.map((o) => o.key)).toEqual([null, null, "erase:user:42"]);
    });
  });
}
