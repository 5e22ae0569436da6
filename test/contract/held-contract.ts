import { beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import {
  newOperation,
  type Operation,
  type OperationFilter,
  type OperationKind,
  type OperationParams,
} from "../../src/core/operation.js";
import { pauseExpiredError, type OnResume, type PauseScope } from "../../src/core/pause.js";
import { withNext } from "../../src/core/series.js";
import type { PauseStore } from "../../src/store/pause-store.js";
import type { Store } from "../../src/store/store.js";
import { jobMaker, pausingStorePerTest } from "../support/jobs.js";
import { dailySeries, utcOccurrence } from "../support/series.js";
import { claimAllDue, operationRunAll, pausesWorkAll } from "../support/store-steps.js";
import { inserted } from "../support/pauses.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;

/**
 * Held jobs are pending jobs, part of the store contract (run by describeStoreContract where
 * the store declares `pauses`): whatever acts on a pending job (a reschedule by id or key, a
 * replacing or debouncing key, a bulk operation, a series' own change) acts on a held one
 * too, and it stays held by its pause (whose count follows exactly) until the pause gives
 * it back by its policy.
 */
export function describeHeldContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (held jobs): ${name}`, () => {
    const per = pausingStorePerTest(makeStore);
    let store: Store;
    let pauses: PauseStore;
    let newId: () => string;
    let opIds: () => string;

    beforeEach(() => {
      store = per.store;
      pauses = per.pauses;
      let clockForIds = T0;
      newId = createIdGenerator(() => clockForIds++);
      let opClock = T0;
      opIds = createIdGenerator(() => opClock++);
    });

    const makeJob = jobMaker(T0);
    /** A job of tenant "a" for target "mail" (the pauses' scopes name them). */
    function job(over: Partial<NewJob> & { dueAt: number }): NewJob {
      return makeJob(over.dueAt, { tenant: "a", target: "mail", ...over });
    }

    async function insert(jobs: NewJob[], now = T0) {
      return (await store.jobsInsert({ jobs, now })).map((r) => r.job);
    }

    async function claimAll(now: number) {
      return (await claimAllDue(store, now)).map((j) => j.id).sort();
    }

    async function pauseAll(scope: PauseScope, onResume: OnResume = "fire", tenant = "a") {
      const p = inserted(
        await pauses.pauseInsert({ pause: { id: newId(), tenant, scope, onResume }, now: T0 }),
      );
      await workAll(T0);
      return p;
    }

    const workAll = (now: number) => pausesWorkAll(pauses, now, 100);

    async function resumeAll(id: string, now: number) {
      await pauses.pauseResume({ id, now });
      await workAll(now);
    }

    async function heldCount(id: string) {
      return (await pauses.pauseGet({ id }))!.heldJobs;
    }

    it("a held job rescheduled by id or by key stays held at its new time; the pause's policy meets that time", async () => {
      const [byId, byKey] = await insert([
        job({ dueAt: T0 + 5 * HOUR }),
        job({ dueAt: T0 + 1000, key: "k" }),
      ]);
      const p = await pauseAll({ tenant: true }, "expire");
      const moved = await store.jobReschedule({ id: byId!.id, dueAt: T0 + 1000, now: T0 });
      expect(moved).toMatchObject({
        outcome: "rescheduled",
        job: { status: "pending", dueAt: T0 + 1000, pausedBy: p.id, version: 2 },
      });
      const found = await store.jobGetByKey({ tenant: "a", key: "k" });
      expect(found).toMatchObject({ id: byKey!.id, pausedBy: p.id });
      const later = await store.jobReschedule({ id: found!.id, dueAt: T0 + 5 * HOUR, now: T0 });
      expect(later).toMatchObject({
        outcome: "rescheduled",
        job: { dueAt: T0 + 5 * HOUR, pausedBy: p.id },
      });
      expect(await store.jobGet({ id: byId!.id })).toMatchObject({ pausedBy: p.id });
      expect(await heldCount(p.id)).toBe(2);
      expect(await claimAll(T0 + 6 * HOUR)).toEqual([]);
      // resumed at T0 + 1 h: the job now due before it expires, the one now due later fires
      await resumeAll(p.id, T0 + HOUR);
      expect(await store.jobGet({ id: byId!.id })).toMatchObject({
        status: "expired",
        lastError: pauseExpiredError(p.id),
      });
      expect(await store.jobGet({ id: byKey!.id })).toMatchObject({
        status: "pending",
        dueAt: T0 + 5 * HOUR,
        pausedBy: null,
      });
      expect(await claimAll(T0 + 5 * HOUR)).toEqual([byKey!.id]);
    });

    it("keyMode replace and debounce replace a held job where it is held; keep returns it", async () => {
      const [held] = await insert([job({ dueAt: T0 + 1000, key: "k", tags: ["old"] })]);
      const p = await pauseAll({ tenant: true });
      const [replaced] = await store.jobsInsert({
        jobs: [job({ dueAt: T0 + HOUR, key: "k", payload: 2, keyMode: "replace", tags: ["new"] })],
        now: T0 + 10,
      });
      expect(replaced).toMatchObject({
        created: false,
        outcome: "replaced",
        job: { id: held!.id, dueAt: T0 + HOUR, payload: 2, tags: ["new"], pausedBy: p.id },
      });
      expect(await store.jobsCountByTag({ tenant: "a", tag: "new" })).toBe(1);
      expect(await store.jobsCountByTag({ tenant: "a", tag: "old" })).toBe(0);
      const [debounced] = await store.jobsInsert({
        jobs: [job({ dueAt: T0 + 9 * HOUR, key: "k", keyMode: "debounce", maxWaitMs: 2 * HOUR })],
        now: T0 + 20,
      });
      expect(debounced).toMatchObject({
        outcome: "replaced",
        job: { id: held!.id, dueAt: T0 + 2 * HOUR, pausedBy: p.id },
      });
      const [kept] = await store.jobsInsert({
        jobs: [job({ dueAt: T0, key: "k", keyMode: "keep" })],
        now: T0 + 30,
      });
      expect(kept).toMatchObject({
        outcome: "existing",
        job: { id: held!.id, dueAt: T0 + 2 * HOUR, pausedBy: p.id },
      });
      expect(await store.jobGetByKey({ tenant: "a", key: "k" })).toMatchObject({
        id: held!.id,
        pausedBy: p.id,
      });
      expect(await heldCount(p.id)).toBe(1);
      expect(await claimAll(T0 + 3 * HOUR)).toEqual([]);
      await resumeAll(p.id, T0 + 3 * HOUR);
      expect(await claimAll(T0 + 3 * HOUR)).toEqual([held!.id]);
    });

    it("held jobs replaced, debounced or rescheduled into a staged bucket stay out of the due index, also while their pause gives them back", async () => {
      // staged first: a job made pending in these buckets goes straight to the due index,
      // unless a pause holds it (the next-due read would show it, and wake a watcher for it)
      await store.bucketsStage({ until: T0 + 3 * HOUR, maxRows: 100_000 });
      const [r, d, m] = await insert([
        job({ dueAt: T0 + 1000, key: "r" }),
        job({ dueAt: T0 + 2000, key: "d" }),
        job({ dueAt: T0 + 3000, key: "m" }),
      ]);
      const nextDue = async () => (await store.jobsNextDue({ now: T0 })).earliestDue;
      expect(await nextDue()).toBe(T0 + 1000);
      const p = await pauseAll({ tenant: true });
      expect(await nextDue()).toBeNull();
      const replaced = await store.jobsInsert({
        jobs: [
          job({ dueAt: T0 + 1500, key: "r", keyMode: "replace" }),
          job({ dueAt: T0 + 2500, key: "d", keyMode: "debounce", maxWaitMs: HOUR }),
        ],
        now: T0 + 10,
      });
      expect(replaced.map((x) => [x.outcome, x.job.dueAt, x.job.pausedBy])).toEqual([
        ["replaced", T0 + 1500, p.id],
        ["replaced", T0 + 2500, p.id],
      ]);
      const byKey = await store.jobGetByKey({ tenant: "a", key: "m" });
      await store.jobReschedule({ id: byKey!.id, dueAt: T0 + 500, now: T0 + 20 });
      expect(await nextDue()).toBeNull();
      expect(await heldCount(p.id)).toBe(3);
      // resuming, none given back yet: no pause is active, and still none is claimed
      await pauses.pauseResume({ id: p.id, now: T0 + 2 * HOUR });
      expect(await claimAll(T0 + 2 * HOUR)).toEqual([]);
      expect(await heldCount(p.id)).toBe(3);
      await workAll(T0 + 2 * HOUR);
      expect(await claimAll(T0 + 2 * HOUR)).toEqual([r!.id, d!.id, m!.id].sort());
    });

    it("resume by shift moves what a reschedule made overdue and leaves what it moved later", async () => {
      const [early, late] = await insert([
        job({ dueAt: T0 + 5 * HOUR }),
        job({ dueAt: T0 + 1000 }),
      ]);
      const p = await pauseAll({ tenant: true }, "shift");
      await store.jobReschedule({ id: early!.id, dueAt: T0 + 1000, now: T0 });
      await store.jobReschedule({ id: late!.id, dueAt: T0 + 5 * HOUR, now: T0 });
      // resumed after an hour paused: only the job now due before the resume moves, by the hour
      await resumeAll(p.id, T0 + HOUR);
      expect(await store.jobGet({ id: early!.id })).toMatchObject({
        status: "pending",
        dueAt: T0 + 1000 + HOUR,
        pausedBy: null,
      });
      expect(await store.jobGet({ id: late!.id })).toMatchObject({
        status: "pending",
        dueAt: T0 + 5 * HOUR,
        pausedBy: null,
      });
    });

    async function runOperation(
      kind: OperationKind,
      filter: OperationFilter,
      params: OperationParams = {},
    ): Promise<Operation> {
      const op = newOperation({ id: opIds(), tenant: "a", kind, filter, params }, T0);
      await store.operationsInsert({ operation: op });
      return (await operationRunAll(store, op.id, 2, T0 + 1000)).op;
    }

    it("bulk operations by filter count, move, cancel and erase held jobs; the pause's count follows", async () => {
      const [h1, h2, h3, h4, free] = await insert([
        job({ dueAt: T0 + HOUR, tags: ["x", "y"] }),
        job({ dueAt: T0 + 2 * HOUR, tags: ["x"] }),
        job({ dueAt: T0 + 3 * HOUR, tags: ["z"] }),
        job({ dueAt: T0 + 4 * HOUR, key: "drop:4" }),
        job({ dueAt: T0 + HOUR, tags: ["x"], target: "sms" }),
      ]);
      const p = await pauseAll({ target: "mail" });
      expect(await heldCount(p.id)).toBe(4);
      expect(await runOperation("count", { target: "mail" })).toMatchObject({ changed: 4 });
      expect(await runOperation("count", { tags: ["x"] })).toMatchObject({ changed: 3 });
      const moved = await runOperation(
        "reschedule",
        { tags: ["x"], target: "mail" },
        {
          shiftMs: HOUR,
        },
      );
      expect(moved).toMatchObject({ state: "done", changed: 2, skipped: 0 });
      expect(await store.jobGet({ id: h1!.id })).toMatchObject({
        dueAt: T0 + 2 * HOUR,
        pausedBy: p.id,
      });
      expect(await store.jobGet({ id: h2!.id })).toMatchObject({
        dueAt: T0 + 3 * HOUR,
        pausedBy: p.id,
      });
      expect(await runOperation("cancel", { keyPrefix: "drop:" })).toMatchObject({ changed: 1 });
      expect(await store.jobGet({ id: h4!.id })).toMatchObject({ status: "cancelled" });
      expect(await heldCount(p.id)).toBe(3);
      expect(await runOperation("erase", { tags: ["z"] })).toMatchObject({ changed: 1 });
      expect(await store.jobGet({ id: h3!.id })).toBeNull();
      expect(await heldCount(p.id)).toBe(2);
      // retry concerns dead jobs only: the held ones stay as they are
      expect(await runOperation("retry", { target: "mail" })).toMatchObject({ changed: 0 });
      expect((await store.jobsCountByStatus({ tenant: "a" })).pending).toBe(3);
      expect(await claimAll(T0 + 4 * HOUR)).toEqual([free!.id]);
      await resumeAll(p.id, T0 + 4 * HOUR);
      expect(await claimAll(T0 + 4 * HOUR)).toEqual([h1!.id, h2!.id].sort());
    });

    it("a claim writes its series' next occurrence held when a pause covers it; the resume gives it back", async () => {
      const FIRST = T0 + HOUR;
      const NEXT = Date.UTC(2026, 2, 2, 9, 0, 0); // the rule's next 09:00 after FIRST
      const record = dailySeries(newId(), T0, { template: { target: "mail" } });
      const first = withNext(record, utcOccurrence(FIRST), newId, T0);
      // the pending occurrence was written for another target: the pause of "mail" spares it
      const pending = { ...first.job!, target: "sms" };
      await store.schedulesInsert({ schedule: first.schedule, job: pending, now: T0 });
      const p = await pauseAll({ target: "mail" });
      expect(await claimAll(FIRST)).toEqual([pending.id]);
      const advanced = (await store.scheduleGet({ id: record.id }))!;
      expect(advanced).toMatchObject({ firedCount: 1, lastJobId: pending.id, nextAt: NEXT });
      expect(await store.jobGet({ id: advanced.nextJobId! })).toMatchObject({
        status: "pending",
        target: "mail",
        dueAt: NEXT,
        scheduleId: record.id,
        pausedBy: p.id,
      });
      expect(await heldCount(p.id)).toBe(1);
      expect(await claimAll(NEXT)).toEqual([]);
      await resumeAll(p.id, FIRST + HOUR);
      expect(await claimAll(NEXT)).toEqual([advanced.nextJobId]);
    });

    it("a series' change and delete cancel its held occurrence; the new one is held too", async () => {
      const FIRST = T0 + HOUR;
      const occurrence = utcOccurrence;
      const record = dailySeries(newId(), T0, { template: { target: "mail" } });
      const first = withNext(record, occurrence(FIRST), newId, T0);
      await store.schedulesInsert({ schedule: first.schedule, job: first.job, now: T0 });
      const p = await pauseAll({ tenant: true });
      expect(await store.jobGet({ id: first.job!.id })).toMatchObject({ pausedBy: p.id });
      // an update: the held occurrence is replaced by the new one, held as well
      const next = withNext(
        { ...first.schedule, version: first.schedule.version + 1 },
        occurrence(FIRST + HOUR),
        newId,
        T0,
      );
      const changed = await store.scheduleReplace({
        id: record.id,
        expectedNextJobId: first.job!.id,
        schedule: next.schedule,
        job: next.job,
        now: T0,
      });
      expect(changed).toMatchObject({ outcome: "changed" });
      expect(await store.jobGet({ id: first.job!.id })).toMatchObject({ status: "cancelled" });
      expect(await store.jobGet({ id: next.job!.id })).toMatchObject({
        status: "pending",
        pausedBy: p.id,
      });
      expect(await heldCount(p.id)).toBe(1);
      // the series' own pause: its held occurrence is cancelled
      const paused = {
        ...next.schedule,
        state: "paused" as const,
        version: next.schedule.version + 1,
        nextJobId: null,
        nextAt: null,
        nextNominal: null,
      };
      const r = await store.scheduleReplace({
        id: record.id,
        expectedNextJobId: next.job!.id,
        schedule: paused,
        job: null,
        now: T0,
      });
      expect(r).toMatchObject({ outcome: "changed" });
      expect(await store.jobGet({ id: next.job!.id })).toMatchObject({ status: "cancelled" });
      expect(await heldCount(p.id)).toBe(0);
      // a delete of a series whose occurrence is held
      const other = withNext({ ...record, id: newId() }, occurrence(FIRST), newId, T0);
      await store.schedulesInsert({ schedule: other.schedule, job: other.job, now: T0 });
      expect(await store.jobGet({ id: other.job!.id })).toMatchObject({ pausedBy: p.id });
      expect(await store.scheduleDelete({ id: other.schedule.id, now: T0 })).toMatchObject({
        outcome: "deleted",
      });
      expect(await store.jobGet({ id: other.job!.id })).toMatchObject({ status: "cancelled" });
      expect(await heldCount(p.id)).toBe(0);
      expect((await store.jobsCountByStatus({ tenant: "a" })).pending).toBe(0);
    });
  });
}
