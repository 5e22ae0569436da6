import { expect, it } from "vitest";
import { InvalidJobError, ScheduleNotFoundError } from "../../src/core/errors.js";
import type { Job } from "../../src/core/job.js";
import { describeOnEveryStore, record, runOver } from "../support/harness.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The harness's start: 2026-03-01 10:00 UTC. */
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

describeOnEveryStore("recurring series", (make) => {
  it("a daily series fires each occurrence and the claim writes the next", async () => {
    const h = await make();
    try {
      const fired: Job[] = [];
      h.scheduler.handle("t", (job: Job) => void fired.push(job));
      const { schedule, created } = await h.scheduler.scheduleRecurring({
        cron: "0 9 * * *",
        timeZone: "UTC",
        target: "t",
        payload: { n: 1 },
      });
      expect(created).toBe(true);
      const first = Date.UTC(2026, 2, 2, 9);
      expect(schedule).toMatchObject({ state: "active", nextAt: first, firedCount: 0, version: 1 });
      const pending = await h.scheduler.get(schedule.nextJobId!);
      expect(pending).toMatchObject({
        status: "pending",
        dueAt: first,
        scheduleId: schedule.id,
        nominal: "2026-03-02T09:00:00",
        payload: { n: 1 },
      });
      h.scheduler.start();
      await runOver(h, first);
      expect(fired.map((j) => j.dueAt)).toEqual([first]);
      const after = await h.scheduler.getSchedule(schedule.id);
      expect(after).toMatchObject({
        firedCount: 1,
        nextAt: first + DAY,
        nextNominal: "2026-03-03T09:00:00",
        lastOutcome: { jobId: pending!.id, status: "succeeded" },
      });
      expect(await h.scheduler.get(after!.nextJobId!)).toMatchObject({
        status: "pending",
        dueAt: first + DAY,
        scheduleId: schedule.id,
      });
      await runOver(h, first + DAY);
      expect(fired.map((j) => j.dueAt)).toEqual([first, first + DAY]);
      // one pending occurrence at any time, however many have fired
      expect(await h.scheduler.counts()).toMatchObject({ pending: 1, succeeded: 2 });
    } finally {
      await h.close();
    }
  });

  it("pause cancels the pending occurrence, resume writes the first after now", async () => {
    const h = await make();
    try {
      const fired: number[] = [];
      h.scheduler.handle("t", (job: Job) => void fired.push(job.dueAt));
      const { schedule } = await h.scheduler.scheduleRecurring({
        cron: "0 9 * * *",
        timeZone: "UTC",
        target: "t",
      });
      const paused = await h.scheduler.pauseSchedule(schedule.id);
      expect(paused).toMatchObject({ state: "paused", nextJobId: null, version: 2 });
      expect(await h.scheduler.get(schedule.nextJobId!)).toMatchObject({ status: "cancelled" });
      h.scheduler.start();
      await runOver(h, Date.UTC(2026, 2, 2, 9));
      await runOver(h, Date.UTC(2026, 2, 3, 9));
      expect(fired).toEqual([]);
      const resumed = await h.scheduler.resumeSchedule(schedule.id);
      expect(resumed).toMatchObject({
        state: "active",
        nextAt: Date.UTC(2026, 2, 4, 9),
        version: 3,
      });
      await runOver(h, Date.UTC(2026, 2, 4, 9));
      expect(fired).toEqual([Date.UTC(2026, 2, 4, 9)]);
    } finally {
      await h.close();
    }
  });

  it("update replaces the pending occurrence atomically; a stale version is refused", async () => {
    const h = await make();
    try {
      const { schedule } = await h.scheduler.scheduleRecurring({
        cron: "0 9 * * *",
        timeZone: "UTC",
        target: "t",
      });
      // the template alone: the same occurrence, a new job carrying the new payload
      const t1 = await h.scheduler.updateSchedule(schedule.id, { payload: { v: 2 } });
      expect(t1).toMatchObject({ version: 2, nextAt: schedule.nextAt });
      expect(t1.nextJobId).not.toBe(schedule.nextJobId);
      expect(await h.scheduler.get(schedule.nextJobId!)).toMatchObject({ status: "cancelled" });
      expect(await h.scheduler.get(t1.nextJobId!)).toMatchObject({
        status: "pending",
        payload: { v: 2 },
      });
      // the rule: the first occurrence of the new rule after now
      const t2 = await h.scheduler.updateSchedule(
        schedule.id,
        { cron: "30 10 * * *" },
        { expectedVersion: 2 },
      );
      expect(t2).toMatchObject({
        version: 3,
        nextAt: Date.UTC(2026, 2, 1, 10, 30),
        rule: { cron: "30 10 * * *" },
      });
      expect(await h.scheduler.get(t1.nextJobId!)).toMatchObject({ status: "cancelled" });
      await expect(
        h.scheduler.updateSchedule(schedule.id, { payload: 3 }, { expectedVersion: 2 }),
      ).rejects.toMatchObject({ name: "VersionConflictError" });
      await expect(
        h.scheduler.updateSchedule(schedule.id, { cron: "0 25 * * *" }),
      ).rejects.toBeInstanceOf(InvalidJobError);
      expect(await h.scheduler.counts()).toMatchObject({ pending: 1, cancelled: 2 });
    } finally {
      await h.close();
    }
  });

  it("skip next writes the one after; delete cancels the pending occurrence", async () => {
    const h = await make();
    try {
      const { schedule } = await h.scheduler.scheduleRecurring({
        cron: "0 9 * * *",
        timeZone: "UTC",
        target: "t",
      });
      const skipped = await h.scheduler.skipNextOccurrence(schedule.id);
      expect(skipped.nextAt).toBe(Date.UTC(2026, 2, 3, 9));
      const gone = await h.scheduler.deleteSchedule(schedule.id);
      expect(gone.id).toBe(schedule.id);
      expect(await h.scheduler.get(skipped.nextJobId!)).toMatchObject({ status: "cancelled" });
      expect(await h.scheduler.getSchedule(schedule.id)).toBeNull();
      await expect(h.scheduler.pauseSchedule(schedule.id)).rejects.toBeInstanceOf(
        ScheduleNotFoundError,
      );
      expect(await h.scheduler.counts()).toMatchObject({ pending: 0 });
    } finally {
      await h.close();
    }
  });

  it("the series shows its pending occurrence's time after the job is rescheduled by id", async () => {
    const h = await make();
    try {
      const { schedule } = await h.scheduler.scheduleRecurring({
        cron: "0 9 * * *",
        timeZone: "UTC",
        target: "t",
      });
      const moved = Date.UTC(2026, 2, 2, 9, 30);
      await h.scheduler.reschedule(schedule.nextJobId!, moved);
      expect(await h.scheduler.getSchedule(schedule.id)).toMatchObject({
        nextJobId: schedule.nextJobId,
        nextAt: moved,
      });
      const listed = await h.scheduler.listSchedules();
      expect(listed.schedules.map((s) => s.nextAt)).toEqual([moved]);
    } finally {
      await h.close();
    }
  });

  it("misfire policies after downtime: fire-once, fire-all (bounded), skip; recorded", async () => {
    const h = await make();
    try {
      const fired = new Map<string, number[]>();
      h.scheduler.handle("t", (job: Job) => {
        const list = fired.get(job.scheduleId!) ?? [];
        list.push(job.nominal === null ? -1 : job.dueAt);
        fired.set(job.scheduleId!, list);
      });
      const hourly = { cron: "0 * * * *", timeZone: "UTC", target: "t" };
      const once = (await h.scheduler.scheduleRecurring({ ...hourly, misfire: "fire-once" }))
        .schedule;
      const all = (await h.scheduler.scheduleRecurring({ ...hourly, misfire: "fire-all" }))
        .schedule;
      const capped = (
        await h.scheduler.scheduleRecurring({ ...hourly, misfire: "fire-all", misfireLimit: 2 })
      ).schedule;
      const skip = (await h.scheduler.scheduleRecurring({ ...hourly, misfire: "skip" })).schedule;
      const h11 = Date.UTC(2026, 2, 1, 11);
      // down from 10:00 to 15:10: 11:00 .. 15:00 missed (5 occurrences)
      h.clock.set(Date.UTC(2026, 2, 1, 15, 10));
      const events = record(h.scheduler, "succeeded", "expired");
      h.scheduler.start();
      for (let i = 0; i < 20; i++) await h.clock.advance(100);
      await h.scheduler.idle();
      const hours = (n: number) => Array.from({ length: n }, (_, i) => h11 + i * HOUR);
      expect(fired.get(once.id)).toEqual([h11]);
      expect(fired.get(all.id)).toEqual(hours(5));
      expect(fired.get(capped.id)).toEqual(hours(3));
      expect(fired.get(skip.id)).toBeUndefined();
      expect(events.filter((e) => e.kind === "expired")).toHaveLength(1);
      const next = Date.UTC(2026, 2, 1, 16);
      const now = h.clock.now();
      expect(await h.scheduler.getSchedule(once.id)).toMatchObject({
        nextAt: next,
        missedCount: 4,
        firedCount: 1,
        lastMisfireAt: expect.any(Number),
      });
      expect(await h.scheduler.getSchedule(all.id)).toMatchObject({
        nextAt: next,
        missedCount: 0,
        firedCount: 5,
      });
      expect(await h.scheduler.getSchedule(capped.id)).toMatchObject({
        nextAt: next,
        missedCount: 2,
        firedCount: 3,
      });
      expect(await h.scheduler.getSchedule(skip.id)).toMatchObject({
        nextAt: next,
        missedCount: 5,
        lastOutcome: { status: "expired" },
      });
      expect(now).toBeLessThan(next);
    } finally {
      await h.close();
    }
  });

  it("keeps 09:00 Europe/Paris across the spring-forward night; 02:30 fires once after the gap", async () => {
    const h = await make({ start: Date.UTC(2026, 2, 27, 12) });
    try {
      const fired = new Map<string, number[]>();
      h.scheduler.handle("t", (job: Job) => {
        fired.set(job.scheduleId!, [...(fired.get(job.scheduleId!) ?? []), job.dueAt]);
      });
      const nine = (
        await h.scheduler.scheduleRecurring({
          cron: "0 9 * * *",
          timeZone: "Europe/Paris",
          target: "t",
        })
      ).schedule;
      const gap = (
        await h.scheduler.scheduleRecurring({
          cron: "30 2 * * *",
          timeZone: "Europe/Paris",
          target: "t",
        })
      ).schedule;
      h.scheduler.start();
      // by hand from the IANA rules: CET (+01:00) until 2026-03-29 01:00Z, then CEST (+02:00)
      const expectNine = [
        Date.UTC(2026, 2, 28, 8),
        Date.UTC(2026, 2, 29, 7),
        Date.UTC(2026, 2, 30, 7),
      ];
      // 02:30 on the 29th does not exist (02:00 -> 03:00): shifted by the gap, 03:30 CEST = 01:30Z
      const expectGap = [
        Date.UTC(2026, 2, 28, 1, 30),
        Date.UTC(2026, 2, 29, 1, 30),
        Date.UTC(2026, 2, 30, 0, 30),
      ];
      for (const at of [...expectNine, ...expectGap].sort((a, b) => a - b)) await runOver(h, at);
      expect(fired.get(nine.id)).toEqual(expectNine);
      expect(fired.get(gap.id)).toEqual(expectGap);
      const jobs = (
        await h.scheduler.list({ status: "succeeded", dueFrom: Date.UTC(2026, 2, 27), limit: 10 })
      ).jobs;
      expect(jobs.filter((j) => j.scheduleId === gap.id).map((j) => j.nominal)).toEqual([
        "2026-03-28T02:30:00",
        "2026-03-29T02:30:00",
        "2026-03-30T02:30:00",
      ]);
    } finally {
      await h.close();
    }
  });

  it("ends after count; an idempotency key returns the stored series; bad input names the field", async () => {
    const h = await make();
    try {
      h.scheduler.handle("t", () => undefined);
      const input = { cron: "0 9 * * *", timeZone: "UTC", target: "t", count: 2, key: "daily" };
      const { schedule } = await h.scheduler.scheduleRecurring(input);
      const again = await h.scheduler.scheduleRecurring(input);
      expect(again).toMatchObject({ created: false, schedule: { id: schedule.id } });
      h.scheduler.start();
      await runOver(h, Date.UTC(2026, 2, 2, 9));
      await runOver(h, Date.UTC(2026, 2, 3, 9));
      expect(await h.scheduler.getSchedule(schedule.id)).toMatchObject({
        state: "ended",
        firedCount: 2,
        nextJobId: null,
      });
      expect(await h.scheduler.counts()).toMatchObject({ pending: 0, succeeded: 2 });
      const bad = async (i: object) =>
        h.scheduler.scheduleRecurring(i as never).catch((e: InvalidJobError) => e.field);
      expect(await bad({ cron: "not cron", target: "t" })).toBe("cron");
      expect(await bad({ cron: "0 0 30 2 *", target: "t" })).toBe("cron");
      expect(await bad({ cron: "0 9 * * *", target: "t", timeZone: "Mars/Olympus" })).toBe(
        "timeZone",
      );
      expect(await bad({ cron: "0 9 * * *", target: "t", misfire: "sometimes" })).toBe("misfire");
      expect(await bad({ cron: "0 9 * * *", target: "t", every: "day" })).toBe("every");
      expect(await bad({ target: "t" })).toBe("cron");
      expect(await bad({ cron: "0 9 * * *" })).toBe("target");
      const list = await h.scheduler.listSchedules({ state: "ended" });
      expect(list.schedules.map((s) => s.id)).toEqual([schedule.id]);
      const preview = await h.scheduler.previewOccurrences({
        cron: "0 9 * * 1-5",
        timeZone: "Europe/Paris",
        from: T0,
        count: 3,
      });
      // 2026-03-02 is a Monday; CET
      expect(preview.map((o) => o.at)).toEqual([
        Date.UTC(2026, 2, 2, 8),
        Date.UTC(2026, 2, 3, 8),
        Date.UTC(2026, 2, 4, 8),
      ]);
      const stored = await h.scheduler.previewOccurrences({
        scheduleId: schedule.id,
        from: T0 + DAY * 10,
        count: 1,
      });
      expect(stored.map((o) => o.at)).toEqual([Date.UTC(2026, 2, 12, 9)]);
    } finally {
      await h.close();
    }
  });
});

describeOnEveryStore("recurring series and job keys", (make) => {
  it("keyMode replace on a series' key creates a job beside the series, never touches its occurrence", async () => {
    const h = await make();
    try {
      const fired: Job[] = [];
      h.scheduler.handle("t", (job: Job) => void fired.push(job));
      const { schedule } = await h.scheduler.scheduleRecurring({
        cron: "0 9 * * *",
        timeZone: "UTC",
        target: "t",
        key: "daily-report",
        payload: { series: true },
      });
      const occurrence = (await h.scheduler.get(schedule.nextJobId!))!;
      expect(occurrence).toMatchObject({ key: null, scheduleId: schedule.id });
      // job keys and series keys are apart: an occurrence holds no key, so a replacing
      // schedule under the series' key cannot take it over (and orphan the series)
      const first = await h.scheduler.schedule({
        dueAt: T0 + HOUR,
        target: "t",
        key: "daily-report",
        keyMode: "replace",
        payload: { job: 1 },
      });
      expect(first).toMatchObject({ outcome: "created", job: { scheduleId: null } });
      const again = await h.scheduler.schedule({
        dueAt: T0 + 2 * HOUR,
        target: "t",
        key: "daily-report",
        keyMode: "replace",
        payload: { job: 2 },
      });
      expect(again).toMatchObject({ outcome: "replaced", job: { id: first.job.id } });
      expect(await h.scheduler.get(occurrence.id)).toEqual(occurrence);
      expect(await h.scheduler.getByKey("daily-report")).toMatchObject({ id: first.job.id });
      expect(await h.scheduler.getSchedule(schedule.id)).toMatchObject({
        nextJobId: occurrence.id,
        version: 1,
      });
      // cancelling by the key cancels the job, not the series' occurrence
      expect(await h.scheduler.cancelByKey("daily-report")).toMatchObject({ outcome: "cancelled" });
      expect(await h.scheduler.get(occurrence.id)).toMatchObject({ status: "pending" });
      h.scheduler.start();
      await runOver(h, occurrence.dueAt);
      expect(fired.map((j) => j.id)).toEqual([occurrence.id]);
      expect(await h.scheduler.getSchedule(schedule.id)).toMatchObject({
        firedCount: 1,
        nextAt: occurrence.dueAt + DAY,
      });
    } finally {
      await h.close();
    }
  });
});
