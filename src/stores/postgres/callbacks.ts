import type pg from "pg";
import { callbackJob } from "../../core/callbacks.js";
import type { NewJob } from "../../core/job.js";
import type { Settlement } from "../../store/store.js";
import { inTransaction } from "./connection.js";
import { insertArrays, placeJobs, rowToJob, type JobRow } from "./rows.js";
import type { Statements } from "./statements.js";

/**
 * Outcome callbacks on PostgreSQL (core/callbacks.ts): a callback job is inserted in the
 * transaction that records the outcome it reports. A settle batch without callbacks stays
 * the one autocommit statement it was; only a batch carrying some runs in a transaction.
 */

/** Where the store inserts jobs: the statements and the placement of new jobs. */
export interface CallbackDeps {
  readonly pool: pg.Pool;
  readonly sql: Statements;
  readonly bucketWidthMs: number;
  readonly shardCount: number;
}

/**
 * The settle statement with `arrays`, and the callbacks of the settlements it applied,
 * in one transaction. Resolves to the applied (id, fence) rows and how many callbacks
 * were stored.
 */
export async function settleWithCallbacks(
  d: CallbackDeps,
  list: readonly Settlement[],
  arrays: unknown[],
  now: number,
): Promise<{ rows: { id: string; fence: number }[]; called: number }> {
  const callbacks: NewJob[] = [];
  const owner: Settlement[] = [];
  for (const st of list) {
    if (st.callback) {
      callbacks.push(st.callback);
      owner.push(st);
    }
  }
  if (callbacks.length === 0) {
    const { rows } = await d.pool.query<{ id: string; fence: number }>(d.sql.settle, arrays);
    return { rows, called: 0 };
  }
  const place = placeJobs(callbacks, d.bucketWidthMs, d.shardCount);
  return inTransaction(d.pool, async (c) => {
    const { rows } = await c.query<{ id: string; fence: number }>(d.sql.settle, arrays);
    const applied = new Set(rows.map((r) => `${r.id}:${r.fence}`));
    const stored = owner.flatMap((st, i) => (applied.has(`${st.id}:${st.fence}`) ? [i] : []));
    if (stored.length > 0) {
      await c.query(d.sql.liveInsert, insertArrays(callbacks, place, now, stored));
    }
    return { rows, called: stored.length };
  });
}

/** What the lease sweep's statement answers (statements.leasesExpire). */
export interface LeaseExpiryRow {
  dead: number;
  requeued: number;
  earliest: number | null;
  next_expires_at: number | null;
  /** The swept claims naming callbacks, as JSON rows of jobs_claimed, or null. */
  called: JobRow[] | null;
}

/**
 * The lease sweep and the callbacks of the claims it ended (a failed attempt, or dead when
 * it was the last), in one transaction. Resolves to the sweep's row and how many
 * callbacks were stored.
 */
export async function expireLeasesWithCallbacks(
  d: CallbackDeps,
  p: { now: number; limit: number; error: string },
  newId: () => string,
): Promise<{ row: LeaseExpiryRow | undefined; called: number }> {
  return inTransaction(d.pool, async (c) => {
    const { rows } = await c.query<LeaseExpiryRow>(d.sql.leasesExpire, [p.now, p.limit, p.error]);
    const row = rows[0];
    const callbacks: NewJob[] = [];
    for (const r of row?.called ?? []) {
      const job = rowToJob({ ...r, status: "claimed", finished_at: null });
      const last = job.attempts >= job.maxAttempts;
      const at = { now: p.now, firedAt: job.firedAt, error: p.error, result: null };
      const cb = callbackJob(
        job,
        last ? { ...at, event: "dead" } : { ...at, event: "failed", retryAt: job.dueAt },
        newId(),
      );
      if (cb) callbacks.push(cb);
    }
    if (callbacks.length > 0) {
      const place = placeJobs(callbacks, d.bucketWidthMs, d.shardCount);
      await c.query(d.sql.liveInsert, insertArrays(callbacks, place, p.now));
    }
    return { row, called: callbacks.length };
  });
}
