import { describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { Store } from "../../src/store/store.js";
import { freshStorePerTest, jobMaker } from "../support/jobs.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const HOUR = 3_600_000;
const TRACE_A = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACE_B = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";

/**
 * The trace context stored with a job, part of the store contract (run by
 * describeStoreContract): the traceparent the Scheduler hands over is kept in its own field
 * (never in targetOptions), NULL when none was given, comes back with the claimed job (the
 * firing reads nothing else to link its span), and stays with the job through every
 * transition: retry, release, expired lease, reschedule, the finished states and a retry of
 * a dead job.
 */
export function describeTraceContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract (trace context): ${name}`, () => {
    const t = freshStorePerTest(makeStore);
    const job = jobMaker(T0);

    async function claim(now: number, extra: Partial<Parameters<Store["jobsClaimDue"]>[0]> = {}) {
      await t.store.bucketsStage({ until: now + HOUR, maxRows: 1_000_000 });
      return t.store.jobsClaimDue({
        now,
        dueBefore: now,
        limit: 100,
        leaseMs: 30_000,
        owner: "node-a",
        ...extra,
      });
    }

    const traces = (jobs: readonly Job[]) => jobs.map((j) => [j.id, j.traceContext]);

    it("keeps it in its own field, NULL when none, and hands it to every kind of claim", async () => {
      const inserted = await t.store.jobsInsert({
        jobs: [
          job(T0, { traceContext: TRACE_A }),
          job(T0 + 1),
          job(T0 + 2, { traceContext: TRACE_B, tenant: "other" }),
          job(T0 + 3, { traceContext: TRACE_A, key: "k" }),
          job(T0 + 4, { traceContext: TRACE_B, key: "k" }),
        ],
        now: T0,
      });
      const [a, b, c, keyed] = inserted.map((r) => r.job);
      expect(traces([a!, b!, c!, keyed!])).toEqual([
        [a!.id, TRACE_A],
        [b!.id, null],
        [c!.id, TRACE_B],
        [keyed!.id, TRACE_A],
      ]);
      // The repeated key answers the job holding it, with that job's context.
      expect(inserted[4]).toMatchObject({ created: false, job: { traceContext: TRACE_A } });
      const read = await t.store.jobGet({ id: a!.id });
      expect(read).toMatchObject({ traceContext: TRACE_A, targetOptions: null });
      expect((await t.store.jobGet({ id: b!.id }))!.traceContext).toBeNull();
      expect(traces(await t.store.jobsList({ limit: 10 }))).toEqual(traces([a!, b!, c!, keyed!]));

      // The plain due prefix, a claim given shards, and a claim shared out per tenant.
      expect(traces(await claim(T0, { limit: 1 }))).toEqual([[a!.id, TRACE_A]]);
      const all = Array.from({ length: t.store.shardCount }, (_, i) => i);
      expect(traces(await claim(T0 + 1, { shards: all }))).toEqual([[b!.id, null]]);
      const shared = await claim(T0 + 10, {
        tenantShare: { max: 1, held: new Map([["default", 0]]) },
      });
      expect(traces(shared).sort()).toEqual(
        [
          [c!.id, TRACE_B],
          [keyed!.id, TRACE_A],
        ].sort(),
      );
      expect(traces(await t.store.jobsList({ limit: 10, statuses: ["claimed"] }))).toEqual(
        traces([a!, b!, c!, keyed!]),
      );
    });

    it("stays with the job through retries, releases, expired leases, reschedules and history", async () => {
      const [r] = await t.store.jobsInsert({
        jobs: [job(T0, { traceContext: TRACE_A, maxAttempts: 5 })],
        now: T0,
      });
      const id = r!.job.id;
      const get = async () => (await t.store.jobGet({ id }))!;
      const settle = (s: Parameters<Store["jobsSettle"]>[0]["settlements"][number]) =>
        t.store.jobsSettle({ now: s.firedAt + 1, settlements: [s] });

      const [c1] = await claim(T0);
      await settle({
        id,
        fence: c1!.fence,
        firedAt: T0,
        outcome: "retry",
        retryAt: T0 + 10,
        error: "x",
      });
      expect(await get()).toMatchObject({ status: "pending", traceContext: TRACE_A });
      const [c2] = await claim(T0 + 10);
      expect(c2).toMatchObject({ attempts: 2, traceContext: TRACE_A });
      await settle({ id, fence: c2!.fence, firedAt: T0 + 10, outcome: "release" });
      const [c3] = await claim(T0 + 20);
      expect(c3!.traceContext).toBe(TRACE_A);
      expect(await t.store.leasesExpire({ now: T0 + 60_000, limit: 10 })).toMatchObject({
        requeued: 1,
      });
      const moved = await t.store.jobReschedule({ id, dueAt: T0 + 2 * HOUR, now: T0 + 60_000 });
      expect(moved).toMatchObject({ outcome: "rescheduled", job: { traceContext: TRACE_A } });
      const [c4] = await claim(T0 + 2 * HOUR);
      expect(c4!.traceContext).toBe(TRACE_A);
      await settle({ id, fence: c4!.fence, firedAt: T0 + 2 * HOUR, outcome: "dead", error: "y" });
      expect(await get()).toMatchObject({ status: "dead", traceContext: TRACE_A });
      const retried = await t.store.jobRetry({ id, dueAt: T0 + 3 * HOUR, now: T0 + 3 * HOUR });
      expect(retried).toMatchObject({ outcome: "rescheduled", job: { traceContext: TRACE_A } });
      const [c5] = await claim(T0 + 3 * HOUR);
      expect(c5!.traceContext).toBe(TRACE_A);
      await settle({
        id,
        fence: c5!.fence,
        firedAt: T0 + 3 * HOUR,
        outcome: "succeeded",
        result: null,
      });
      expect(await get()).toMatchObject({ status: "succeeded", traceContext: TRACE_A });

      const [other] = await t.store.jobsInsert({
        jobs: [job(T0 + 4 * HOUR, { traceContext: TRACE_B })],
        now: T0,
      });
      const cancelled = await t.store.jobCancel({ id: other!.job.id, now: T0 });
      expect(cancelled).toMatchObject({ outcome: "cancelled", job: { traceContext: TRACE_B } });
    });
  });
}
