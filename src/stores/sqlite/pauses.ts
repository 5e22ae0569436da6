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
import type { Job } from "../../core/job.js";
import type { PauseListQuery, PauseStore } from "../../store/pause-store.js";
import type { SqliteContext } from "./context.js";
import { toPause, type PauseRow } from "../../store/pause-row.js";
import { holdJobs, type Holdable } from "./held.js";
import { tagsFromColumn } from "../../core/tags.js";
import { CounterDeltas, rowToJob, type JobTuple } from "./rows.js";
import { advanceClaimed } from "./series-advance.js";

/**
 * Pauses on SQLite (src/core/pause.ts says what they do). A held job keeps its `jobs` row and
 * gets a `held` row; it is kept out of `hot` (the insert, placeInHot and staging skip it, the
 * claim reads none), so while paused it costs no claim and no poll. Each function runs inside
 * the caller's write transaction.
 */

export function insertPause(ctx: SqliteContext, p: NewPause, now: number): Pause {
  const { kind, value } = scopeColumns(p.scope);
  ctx.s.pauseInsert.run({ id: p.id, tenant: p.tenant, kind, value, onResume: p.onResume, now });
  return getPause(ctx, p.id)!;
}

export function getPause(ctx: SqliteContext, id: string, tenant?: string): Pause | null {
  const row = ctx.s.pauseById.get(id) as PauseRow | undefined;
  if (!row || (tenant !== undefined && row.tenant !== tenant)) return null;
  return toPause(row);
}

export function listPauses(ctx: SqliteContext, q: PauseListQuery): Pause[] {
  const rows = ctx.s.pausesAll.all({
    tenant: q.tenant ?? null,
    after: q.after ?? null,
    states: q.states === undefined ? null : JSON.stringify(q.states),
    // SQLite reads a negative LIMIT as none.
    limit: q.limit ?? -1,
  }) as PauseRow[];
  return rows.map(toPause);
}

export function resumePause(
  ctx: SqliteContext,
  id: string,
  tenant: string | undefined,
  now: number,
): PauseResumeResult {
  const before = getPause(ctx, id, tenant);
  if (!before) return { outcome: "not-found" };
  if (before.state !== "active") return { outcome: "already-resumed", pause: before };
  ctx.s.pauseResume.run({ id, now });
  return { outcome: "resumed", pause: getPause(ctx, id)! };
}

/**
 * One bounded step of pause work: the oldest pause with work gets at most `limit` jobs'
 * worth, holding (active) or giving back (resuming).
 */
export function workPauses(ctx: SqliteContext, now: number, limit: number): PauseWorkResult {
  const row = ctx.s.pauseWithWork.get() as
    (PauseRow & { hold_bucket: number; hold_seq: number }) | undefined;
  if (!row) return { held: 0, released: 0, more: false };
  const pause = toPause(row);
  if (pause.state === "active") {
    const held = holdStep(ctx, pause, { bucket: row.hold_bucket, seq: row.hold_seq }, limit, now);
    return { held, released: 0, more: true };
  }
  const released = releaseStep(ctx, pause, limit, now);
  return { held: 0, released, more: true };
}

/**
 * Holds the pause's jobs among the next `limit` entries of index jobs_bucket after its cursor
 * (every job pending when the pause was made is in that index; jobs written since are held by
 * the insert, or by the claim if they slip into hot). The pass ends at the index's end.
 */
function holdStep(
  ctx: SqliteContext,
  pause: Pause,
  cursor: { bucket: number; seq: number },
  limit: number,
  now: number,
): number {
  const end = ctx.s.holdScanEnd.get({ ...cursor, limit }) as
    { bucket: number; seq: number } | undefined;
  const to = end ?? { bucket: Number.MAX_SAFE_INTEGER, seq: Number.MAX_SAFE_INTEGER };
  const candidates = ctx.s.holdCandidates.all({
    ...cursor,
    toBucket: to.bucket,
    toSeq: to.seq,
    tenant: pause.tenant,
  }) as {
    seq: number;
    id: string;
    due_at: number;
    target: string;
    attempts: number;
    tags: string | null;
  }[];
  const take: Holdable[] = [];
  for (const c of candidates) {
    const job = { tenant: pause.tenant, target: c.target, tags: tagsFromColumn(c.tags) };
    if (pauseCovering([pause], job)) {
      take.push({
        seq: c.seq,
        id: c.id,
        tenant: pause.tenant,
        dueAt: c.due_at,
        attempts: c.attempts,
      });
    }
  }
  holdJobs(ctx, new Map([[pause.id, take]]), now);
  ctx.s.pauseHoldCursor.run({ id: pause.id, bucket: to.bucket, seq: to.seq, done: end ? 0 : 1 });
  return take.length;
}

/**
 * Gives back up to `limit` of a resuming pause's held jobs, each by the pause's policy
 * (resumeAction): pending again (shifted), or expired. The pause is `resumed` once none is
 * left.
 */
function releaseStep(ctx: SqliteContext, pause: Pause, limit: number, now: number): number {
  const resumedAt = pause.resumedAt ?? now;
  const seqs = ctx.s.heldOfPause.all(pause.id, limit) as { seq: number }[];
  const deltas = new CounterDeltas();
  const expired: Job[] = [];
  for (const { seq } of seqs) {
    ctx.s.heldDelete.run(seq);
    const row = ctx.s.jobBySeq.get(seq) as JobTuple | undefined;
    if (!row) continue;
    const job = rowToJob(row);
    if (job.status !== "pending") continue;
    const action = resumeAction(pause, job.dueAt, resumedAt);
    if (action.kind === "expire") {
      expire(ctx, seq, job, pause.id, now, deltas);
      expired.push(job);
      continue;
    }
    let dueAt = job.dueAt;
    let bucket = job.bucket;
    if (action.kind === "shift") {
      dueAt = action.dueAt;
      bucket = ctx.bucketOf(dueAt);
      ctx.s.jobReschedule.run({ seq, dueAt, bucket, now });
      deltas.move(job.tenant, "pending", "pending", job.bucket, bucket);
    }
    ctx.placeInHot({ seq, bucket, due_at: dueAt, tenant: job.tenant });
    const change = { tenant: job.tenant, id: job.id, kind: "resumed" as const };
    ctx.record({ ...change, status: "pending", dueAt, attempts: job.attempts }, now);
  }
  // An expired occurrence advances its series as a claim would, so the series goes on.
  advanceClaimed(ctx, expired, now, () => ctx.newId(now), deltas);
  ctx.flush(deltas);
  if (seqs.length > 0) ctx.s.pauseHeldAdd.run({ id: pause.id, n: -seqs.length });
  if (seqs.length < limit) ctx.s.pauseResumed.run(pause.id);
  return seqs.length;
}

function expire(
  ctx: SqliteContext,
  seq: number,
  job: Job,
  pauseId: string,
  now: number,
  deltas: CounterDeltas,
): void {
  const error = pauseExpiredError(pauseId);
  ctx.s.finishedInsert.run({
    seq,
    dueAt: job.dueAt,
    id: job.id,
    tenant: job.tenant,
    status: "expired",
    attempts: job.attempts,
    fence: job.fence,
    version: job.version + 1,
    error,
    firedAt: job.firedAt,
    now,
  });
  deltas.move(job.tenant, "pending", "expired", job.bucket, job.bucket);
  const change = { tenant: job.tenant, id: job.id, kind: "expired" as const, error };
  ctx.record({ ...change, status: "expired", dueAt: job.dueAt, attempts: job.attempts }, now);
}

/** The store's `pauses` member: each call one short transaction (reads need none). */
export class SqlitePauseStore implements PauseStore {
  constructor(private readonly ctx: SqliteContext) {}

  async pauseInsert(params: {
    pause: NewPause;
    now: number;
    maxOpen?: number;
  }): Promise<PauseInsertResult> {
    return this.ctx.write("inserting a pause", (): PauseInsertResult => {
      if (params.maxOpen !== undefined) {
        // in the write transaction: no other connection writes a pause between count and insert
        const row = this.ctx.s.pausesOpenCount.get({ tenant: params.pause.tenant }) as {
          n: number;
        };
        if (row.n >= params.maxOpen) return { outcome: "too-many", open: row.n };
      }
      return { outcome: "inserted", pause: insertPause(this.ctx, params.pause, params.now) };
    });
  }

  async pauseGet(params: { id: string; tenant?: string }): Promise<Pause | null> {
    return getPause(this.ctx, params.id, params.tenant);
  }

  async pausesList(params: PauseListQuery): Promise<Pause[]> {
    return listPauses(this.ctx, params);
  }

  async pauseResume(params: {
    id: string;
    tenant?: string;
    now: number;
  }): Promise<PauseResumeResult> {
    return this.ctx.write("resuming a pause", () =>
      resumePause(this.ctx, params.id, params.tenant, params.now),
    );
  }

  /** `wait` changes nothing here: steps take the file's write lock in turn, none is skipped. */
  async pausesWork(params: {
    now: number;
    limit: number;
    wait?: boolean;
  }): Promise<PauseWorkResult> {
    return this.ctx.write("holding or releasing paused jobs", () =>
      workPauses(this.ctx, params.now, params.limit),
    );
  }

  async pausesPurge(params: { before: number; limit: number }): Promise<number> {
    return this.ctx.write(
      "removing resumed pauses",
      () => this.ctx.s.pausesPurge.run(params).changes,
    );
  }

  async pausedJobsCount(params: { tenant?: string }): Promise<number> {
    const row = this.ctx.s.pausedJobs.get({ tenant: params.tenant ?? null }) as { n: number };
    return row.n;
  }
}
