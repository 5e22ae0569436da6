import Database from "better-sqlite3";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseChangeCursor } from "../../src/core/change.js";
import { createIdGenerator, shardOf } from "../../src/core/ids.js";
import { withNext } from "../../src/core/series.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { STEP_COLUMN_PLACES } from "../../src/stores/sqlite/series-rows.js";
import { SERIES_STEP_COLUMNS } from "../../src/stores/sqlite/series-statements.js";
import { dailySeries, utcOccurrence } from "../support/series.js";
import { claimAllDue } from "../support/store-steps.js";
import { tempDir } from "../support/temp-dir.js";

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const FIRST = T0 + 3_600_000;
/** The rule's next 09:00 UTC after FIRST. */
const NEXT = Date.UTC(2026, 2, 2, 9, 0, 0);

describe("the SQLite claim's series step", () => {
  const dir = tempDir("series-step");
  afterAll(() => dir.cleanup());
  let n = 0;

  it("reads each row-wise column from its SERIES_STEP_COLUMNS position", () => {
    const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    const byPlace = Object.entries(STEP_COLUMN_PLACES)
      .sort((a, b) => a[1] - b[1])
      .map(([k]) => snake(k));
    expect(byPlace).toEqual([...SERIES_STEP_COLUMNS]);
  });

  // ten series of one kind (stepped set-wise) and one of another target (row-wise), each
  // with its own payload, on a file of one shard and of eight
  for (const shardCount of [1, 8]) {
    it(`advances series set-wise and row-wise alike (${shardCount} shard(s))`, async () => {
      const store = new SqliteStore({ path: join(dir.path, `s${n++}.db`), shardCount });
      try {
        const newId = createIdGenerator(() => T0);
        const made = Array.from({ length: 11 }, (_, i) => {
          const record = dailySeries(newId(), T0, {
            template: { payload: { i }, target: i === 10 ? "other" : "t" },
          });
          return withNext(record, utcOccurrence(FIRST), newId, T0);
        });
        for (const m of made) {
          await store.schedulesInsert({ schedule: m.schedule, job: m.job, now: T0 });
        }
        const head = await store.changesHead({});
        const claimed = await claimAllDue(store, FIRST);
        expect(claimed).toHaveLength(11);
        for (const [i, m] of made.entries()) {
          const s = (await store.scheduleGet({ id: m.schedule.id }))!;
          expect(s).toMatchObject({
            state: "active",
            firedCount: 1,
            lastJobId: m.job!.id,
            nextAt: NEXT,
            nextNominal: "2026-03-02T09:00:00",
            version: 1,
          });
          const job = (await store.jobGet({ id: s.nextJobId! }))!;
          expect(job).toMatchObject({
            status: "pending",
            dueAt: NEXT,
            payload: { i },
            target: i === 10 ? "other" : "t",
            scheduleId: s.id,
            nominal: "2026-03-02T09:00:00",
            shard: shardOf(job.id, shardCount),
            maxAttempts: 3,
          });
        }
        const feed = await store.changesRead({ after: parseChangeCursor(head), limit: 100 });
        expect(feed.changes.filter((c) => c.kind === "scheduled")).toHaveLength(11);
        expect(await store.jobsCountByStatus({})).toMatchObject({ pending: 11, claimed: 11 });
      } finally {
        await store.close();
      }
    });
  }
  // core/series.ts stepSeries: a series the claim cannot advance, its rule or its row (a
  // template that no longer decodes), ends with the reason and the claim goes on. Copied into
  // the next occurrence instead, the template would make that job's claim throw, and every
  // claim after it, for every tenant of the file.
  for (const together of [false, true]) {
    it(`ends a series whose stored template does not decode (${together ? "set-wise" : "row-wise"})`, async () => {
      const path = join(dir.path, `s${n++}.db`);
      const store = new SqliteStore({ path });
      try {
        const newId = createIdGenerator(() => T0);
        const made = Array.from({ length: together ? 3 : 1 }, () =>
          withNext(dailySeries(newId(), T0), utcOccurrence(FIRST), newId, T0),
        );
        for (const m of made) {
          await store.schedulesInsert({ schedule: m.schedule, job: m.job, now: T0 });
        }
        const bad = made[0]!.schedule.id;
        const side = new Database(path);
        try {
          side.prepare("UPDATE schedules SET payload = '{not json' WHERE id = ?").run(bad);
          expect(await claimAllDue(store, FIRST)).toHaveLength(made.length);
          // read raw: the series' template no longer decodes (scheduleGet would throw)
          const ended = side
            .prepare(
              `SELECT state, next_job_id, next_at, fired_count, last_job_id, ended_reason
              FROM schedules WHERE id = ?`,
            )
            .get(bad) as Record<string, unknown>;
          expect(ended).toMatchObject({
            state: "ended",
            next_job_id: null,
            next_at: null,
            fired_count: 1,
            last_job_id: made[0]!.job!.id,
          });
          expect(ended.ended_reason).toMatch(/^the series could not be advanced: .*JSON/);
        } finally {
          side.close();
        }
        for (const m of made.slice(1)) {
          expect(await store.scheduleGet({ id: m.schedule.id })).toMatchObject({
            state: "active",
            firedCount: 1,
            nextAt: NEXT,
          });
        }
        // the next day's claim goes on
        expect(await claimAllDue(store, NEXT)).toHaveLength(made.length - 1);
      } finally {
        await store.close();
      }
    });
  }
});
