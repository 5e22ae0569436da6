import type pg from "pg";
import { bucketOf } from "../../core/buckets.js";
import type { Job } from "../../core/job.js";
import {
  pauseCovering,
  pauseExpiredError,
  resumeAction,
  scopeColumns,
  type NewPause,
  type Pause,
  type PauseInsertResult,
  type PauseResumeResult,
  type PauseWorkResult,
} from "../../core/pause.js";
import { toPause, type PauseRow } from "../../store/pause-row.js";
import { tagsFromColumn } from "../../core/tags.js";
import type { PauseListenLoop, PauseListQuery, PauseStore } from "../../store/pause-store.js";
import { inTransaction, withRetry } from "./connection.js";
import type { DueNotifier } from "./due-notifier.js";
import type { PauseStatements } from "./pause-statements.js";
import { rowToJob, type JobRow } from "./rows.js";

/**
 * Pauses on PostgreSQL (src/core/pause.ts says what they do). A held job's row moves from
 * jobs_live to jobs_held, so while paused it costs no claim, no poll and no next-due read,
 * and its live partition can be dropped. Which jobs a pause covers is decided here, by
 * pauseMatches, at each of the three places a job is held: the insert (liveInsert returns
 * where its rows went while some pause holds), the claim (claimMoving says whether one held
 * when it began: holdClaimedJobs, in the claim's transaction) and the pause's own pass.
 * A pause made through any node is seen by every claim that starts after it commits; the
 * claims other nodes already hold are handed back by their engines when the pause's
 * notification ("pauses", the schema's channel) reaches them (onPausesChanged).
 */

/** A pause row with this store's hold pass position (index jobs_live_tenant_due). */
interface PgPauseRow extends PauseRow {
  hold_due: number;
  hold_id: string;
}

/** What the pause members need of the store. */
export interface PgPauseDeps {
  readonly pool: pg.Pool;
  readonly sql: PauseStatements;
  readonly notifier: DueNotifier;
  readonly bucketWidthMs: number;
  /** The store's error mapping (context added, a full disk as StorageFullError). */
  readonly run: <T>(what: string, fn: () => Promise<T>) => Promise<T>;
  /** Makes the live partitions of these buckets, and the history one rows finishing now use. */
  readonly ensure: (buckets: readonly number[], now: number) => Promise<void>;
  /** Advances the series of expired occurrences, in the caller's transaction (series.ts). */
  readonly advance: (client: pg.ClientBase, jobs: readonly Job[], now: number) => Promise<void>;
  /** Wakes the nodes that may now have due jobs (a resume gave jobs back). */
  readonly notifyDue: (dueAt: number, now: number) => Promise<void>;
}

/** Where liveInsert put a new row (only returned while some pause holds). */
export interface InsertedRow {
  rel: number;
  tid: string;
  id: string;
}

/**
 * Holds the new rows an active pause covers, in the caller's transaction; returns the id of
 * the pause holding each held job. `jobs` gives each row's tenant, target and tags.
 */
export async function holdInserted(
  c: pg.ClientBase,
  sql: PauseStatements,
  rows: readonly InsertedRow[],
  jobs: ReadonlyMap<string, Pick<Job, "tenant" | "target" | "tags">>,
  now: number,
): Promise<Map<string, string>> {
  if (rows.length === 0) return new Map();
  const active = await activeLocked(c, sql);
  const take = rows.flatMap((r) => {
    const job = jobs.get(r.id);
    const p = job && pauseCovering(active, job);
    return p ? [{ ...r, pause: p.id }] : [];
  });
  if (take.length === 0) return new Map();
  const { rows: held } = await c.query<{ id: string; pause_id: string }>(sql.holdLive, [
    take.map((t) => t.rel),
    take.map((t) => t.tid),
    take.map((t) => t.id),
    take.map((t) => t.pause),
    now,
  ]);
  return new Map(held.map((h) => [h.id, h.pause_id]));
}

/**
 * The claim's check, in its transaction: of the jobs it just took, those an active pause
 * covers are held instead (attempt, fence and version as before the claim); the others are
 * returned. Called only when the claim statement said some pause held.
 */
export async function holdClaimedJobs(
  c: pg.ClientBase,
  sql: PauseStatements,
  jobs: readonly Job[],
  now: number,
): Promise<Job[]> {
  const active = await activeLocked(c, sql);
  const covered = new Map<Job, string>();
  for (const j of jobs) {
    const p = pauseCovering(active, j);
    if (p) covered.set(j, p.id);
  }
  if (covered.size === 0) return [...jobs];
  const held = [...covered.keys()];
  await c.query(sql.holdClaimed, [
    held.map((j) => j.shard),
    held.map((j) => j.id),
    held.map((j) => covered.get(j)!),
    now,
  ]);
  return jobs.filter((j) => !covered.has(j));
}

async function activeLocked(c: pg.ClientBase, sql: PauseStatements): Promise<Pause[]> {
  return (await c.query<PgPauseRow>(sql.activeLocked)).rows.map(toPause);
}

/** The store's `pauses` member (see the file's comment). */
export class PostgresPauseStore implements PauseStore {
  constructor(private readonly d: PgPauseDeps) {}

  async pauseInsert(params: {
    pause: NewPause;
    now: number;
    maxOpen?: number;
  }): Promise<PauseInsertResult> {
    const p = params.pause;
    const { kind, value } = scopeColumns(p.scope);
    const args = [p.id, p.tenant, kind, value, p.onResume, params.now, this.d.notifier.channel];
    const inserted = (rows: PgPauseRow[]) => ({
      outcome: "inserted" as const,
      pause: toPause(rows[0]!),
    });
    const max = params.maxOpen;
    if (max === undefined) {
      const { rows } = await this.d.run("inserting a pause", () =>
        withRetry(() => this.d.pool.query<PgPauseRow>(this.d.sql.insert, args)),
      );
      return inserted(rows);
    }
    return this.d.run("inserting a pause", () =>
      withRetry(() =>
        inTransaction(this.d.pool, async (c): Promise<PauseInsertResult> => {
          await c.query(this.d.sql.openLock, [`${this.d.notifier.channel}/pauses/${p.tenant}`]);
          const open = (await c.query<{ n: number }>(this.d.sql.openCount, [p.tenant])).rows[0]!.n;
          if (open >= max) return { outcome: "too-many", open };
          return inserted((await c.query<PgPauseRow>(this.d.sql.insert, args)).rows);
        }),
      ),
    );
  }

  async pauseGet(params: { id: string; tenant?: string }): Promise<Pause | null> {
    const { rows } = await this.d.run("reading a pause", () =>
      this.d.pool.query<PgPauseRow>(this.d.sql.byId, [params.id]),
    );
    const row = rows[0];
    if (!row || (params.tenant !== undefined && row.tenant !== params.tenant)) return null;
    return toPause(row);
  }

  async pausesList(params: PauseListQuery): Promise<Pause[]> {
    const { rows } = await this.d.run("listing pauses", () =>
      this.d.pool.query<PgPauseRow>(this.d.sql.list, [
        params.tenant ?? null,
        params.states === undefined ? null : [...params.states],
        params.after ?? null,
        // LIMIT NULL is no limit.
        params.limit ?? null,
      ]),
    );
    return rows.map(toPause);
  }

  async pauseResume(params: {
    id: string;
    tenant?: string;
    now: number;
  }): Promise<PauseResumeResult> {
    const before = await this.pauseGet(params);
    if (!before) return { outcome: "not-found" };
    const { rows } = await this.d.run("resuming a pause", () =>
      withRetry(() =>
        this.d.pool.query<PgPauseRow>(this.d.sql.resume, [
          params.id,
          params.now,
          this.d.notifier.channel,
        ]),
      ),
    );
    if (rows[0]) return { outcome: "resumed", pause: toPause(rows[0]) };
    return { outcome: "already-resumed", pause: (await this.pauseGet(params)) ?? before };
  }

  /**
   * One bounded step, in one transaction with the pause's row locked: hold the next batch of
   * an active pause's tenant, or give back the next batch of a resuming pause's held jobs.
   * Another process's step holds the pause's row while it runs: the engine's keeper skips
   * to the next pause, a caller that `wait`s waits for that step's commit (and, if it
   * finished the pause's work, answers `more` to look again).
   */
  async pausesWork(params: {
    now: number;
    limit: number;
    wait?: boolean;
  }): Promise<PauseWorkResult> {
    const { now, limit } = params;
    const wait = params.wait === true;
    const { rows } = await this.d.run("looking for pause work", () =>
      this.d.pool.query<{ work: boolean }>(this.d.sql.anyWork),
    );
    if (rows[0]?.work !== true) return { held: 0, released: 0, more: false };
    await this.d.ensure([], now);
    const r = await this.d.run("holding or releasing paused jobs", () =>
      withRetry(() =>
        inTransaction(this.d.pool, async (c) => {
          const read = wait ? this.d.sql.withWorkWaiting : this.d.sql.withWork;
          const row = (await c.query<PgPauseRow>(read)).rows[0];
          if (!row) return { held: 0, released: 0, more: wait, earliest: null };
          if (row.state === "active") {
            return { held: await this.holdStep(c, row, limit, now), released: 0, more: true };
          }
          return { held: 0, ...(await this.releaseStep(c, toPause(row), limit, now)), more: true };
        }),
      ),
    );
    const earliest = "earliest" in r ? r.earliest : null;
    if (earliest !== null && earliest !== undefined) await this.d.notifyDue(earliest, now);
    return { held: r.held, released: r.released, more: r.more };
  }

  async pausedJobsCount(params: { tenant?: string }): Promise<number> {
    const { rows } = await this.d.run("counting paused jobs", () =>
      this.d.pool.query<{ n: number }>(this.d.sql.heldCount, [params.tenant ?? null]),
    );
    return Number(rows[0]?.n ?? 0);
  }

  async pausesPurge(params: { before: number; limit: number }): Promise<number> {
    const r = await this.d.run("removing resumed pauses", () =>
      this.d.pool.query(this.d.sql.purge, [params.before, params.limit]),
    );
    return r.rowCount ?? 0;
  }

  onPausesChanged(listener: () => void, loop?: PauseListenLoop): () => void {
    return this.d.notifier.subscribePauses(listener, loop);
  }

  /**
   * Holds the pause's jobs among the next `limit` of its tenant's pending jobs after the
   * pass's cursor (jobs written since the pause are held by the insert, or by the claim if
   * they come back to jobs_live). The pass ends when a batch comes back short.
   */
  private async holdStep(c: pg.ClientBase, row: PgPauseRow, limit: number, now: number) {
    const pause = toPause(row);
    const { rows } = await c.query<{
      rel: number;
      tid: string;
      id: string;
      due_at: number;
      target: string;
      tags: string | null;
    }>(this.d.sql.candidates, [pause.tenant, row.hold_due, row.hold_id, limit]);
    const take = rows.filter((r) =>
      pauseCovering([pause], {
        tenant: pause.tenant,
        target: r.target,
        tags: tagsFromColumn(r.tags),
      }),
    );
    let held = 0;
    if (take.length > 0) {
      const r = await c.query(this.d.sql.holdLive, [
        take.map((t) => t.rel),
        take.map((t) => t.tid),
        take.map((t) => t.id),
        take.map(() => pause.id),
        now,
      ]);
      held = r.rowCount ?? 0;
    }
    const last = rows[rows.length - 1];
    await c.query(this.d.sql.holdCursor, [
      pause.id,
      last?.due_at ?? row.hold_due,
      last?.id ?? row.hold_id,
      rows.length < limit,
    ]);
    return held;
  }

  /**
   * Gives back up to `limit` of a resuming pause's held jobs, each by its policy
   * (resumeAction); the pause is `resumed` once none is left. Returns the earliest due time
   * given back, for the wake-up.
   */
  private async releaseStep(c: pg.ClientBase, pause: Pause, limit: number, now: number) {
    const resumedAt = pause.resumedAt ?? now;
    const { rows } = await c.query<JobRow>(this.d.sql.heldOfPause, [pause.id, limit]);
    const jobs = rows.map(rowToJob);
    const plan = jobs.map((j) => {
      const a = resumeAction(pause, j.dueAt, resumedAt);
      const due = a.kind === "shift" ? a.dueAt : j.dueAt;
      return { job: j, action: a.kind, due, bucket: bucketOf(due, this.d.bucketWidthMs) };
    });
    const moved = plan.filter((p) => p.action === "shift").map((p) => p.bucket);
    if (moved.length > 0) await this.d.ensure(moved, now);
    if (plan.length > 0) {
      const expired = await c.query<JobRow>(this.d.sql.release, [
        plan.map((p) => p.job.shard),
        plan.map((p) => p.job.id),
        plan.map((p) => p.action),
        plan.map((p) => p.due),
        plan.map((p) => p.bucket),
        pause.id,
        now,
        pauseExpiredError(pause.id),
      ]);
      // An expired occurrence advances its series as a claim would, so the series goes on.
      await this.d.advance(c, expired.rows.map(rowToJob), now);
    }
    if (rows.length < limit) await c.query(this.d.sql.resumed, [pause.id]);
    const back = plan.filter((p) => p.action !== "expire").map((p) => p.due);
    return { released: rows.length, earliest: back.length > 0 ? Math.min(...back) : null };
  }
}
