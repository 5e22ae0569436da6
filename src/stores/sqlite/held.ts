import { pauseCovering, type Pause } from "../../core/pause.js";
import { toPause, type PauseRow } from "../../store/pause-row.js";
import type { SqliteContext } from "./context.js";
import { rowPauseFields, type JobTuple, type StoredState } from "./rows.js";

/**
 * Holding jobs for pauses on SQLite, for every write that meets a pending job (insert, claim,
 * cancel, pauses.ts): a held job keeps its `jobs` row and gets a `held` row, and is kept out of
 * `hot`. Each function runs inside the caller's write transaction.
 */

/** The pauses that hold now (a tiny table: one read per insert and per claim that found jobs). */
export function activePauses(ctx: SqliteContext): Pause[] {
  return (ctx.s.pausesActive.all() as PauseRow[]).map(toPause);
}

/** The job fields holding a pending job needs. */
export type Holdable = { seq: number; id: string; tenant: string; dueAt: number; attempts: number };

/**
 * Holds pending jobs for pauses: a `held` row each, out of hot, a `paused` change, and the
 * pauses' counts. `byPause` maps a pause id to the jobs it takes.
 */
export function holdJobs(ctx: SqliteContext, byPause: Map<string, Holdable[]>, now: number): void {
  for (const [pauseId, jobs] of byPause) {
    let n = 0;
    for (const j of jobs) {
      if (ctx.s.heldInsert.run(j.seq, pauseId).changes === 0) continue;
      n++;
      ctx.s.hotDelete.run({ dueAt: j.dueAt, seq: j.seq });
      ctx.record(
        {
          tenant: j.tenant,
          id: j.id,
          kind: "paused",
          status: "pending",
          dueAt: j.dueAt,
          attempts: j.attempts,
        },
        now,
      );
    }
    if (n > 0) ctx.s.pauseHeldAdd.run({ id: pauseId, n });
  }
}

/**
 * The claim's check (claim.ts): of the pending rows a claim read, those an active pause covers
 * are held instead of claimed (jobs that were in hot before the pause, until pausesWork moves
 * them out). Reads the pauses only when there are rows.
 */
export function holdCovered(ctx: SqliteContext, rows: JobTuple[], now: number): JobTuple[] {
  if (rows.length === 0) return rows;
  const pauses = activePauses(ctx);
  if (pauses.length === 0) return rows;
  const byPause = new Map<string, Holdable[]>();
  const kept = rows.filter((r) => {
    const f = rowPauseFields(r);
    const p = pauseCovering(pauses, f);
    if (!p) return true;
    byPause.set(p.id, [...(byPause.get(p.id) ?? []), f]);
    return false;
  });
  holdJobs(ctx, byPause, now);
  return kept;
}

/**
 * A held job that finishes (cancelled, erased) leaves its pause's count. `current` is the
 * job as read in this transaction, whose pausedBy (held's row, read with it) says whether a
 * pause holds it: a job no pause holds costs no statement (a bulk cancel of 2,000 jobs ran
 * 2,000 deletes that found nothing).
 */
export function releaseFinished(ctx: SqliteContext, current: StoredState): void {
  if (current.job.pausedBy === null) return;
  const row = ctx.s.heldDelete.get(current.seq) as { pause_id: string } | undefined;
  if (row) ctx.s.pauseHeldAdd.run({ id: row.pause_id, n: -1 });
}
