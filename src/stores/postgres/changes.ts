import type pg from "pg";
import {
  compareChangePositions,
  FEED_START,
  formatChangeCursor,
  parseChangeCursor,
  type ChangeKind,
  type ChangePosition,
  type ChangesPage,
  type StoredChange,
} from "../../core/change.js";
import { ChangeCursorExpiredError } from "../../core/errors.js";
import type { JobStatus } from "../../core/job.js";
import { inTransaction } from "./connection.js";
import type { Statements } from "./statements.js";

interface ChangeRow {
  tx: string | null;
  seq: number | null;
  tenant: string;
  job_id: string;
  kind: ChangeKind;
  status: JobStatus;
  due_at: number;
  attempts: number;
  error: string | null;
  at: number;
  xmin: string;
}

/**
 * A page of the feed. Every write statement of the store inserts its changes into
 * job_changes (statements.ts), so a change commits with its transition, on whichever node.
 * Order is (tx, seq), the writing transaction's id first: ids are handed out as transactions
 * start writing, not as they commit, so a bare sequence could hand a reader seq 11 while seq
 * 10 is still in flight, and the reader would skip 10 when it commits. Reading only rows of
 * transactions below the snapshot's xmin (all finished) and ordering by tx means a row that
 * commits later belongs to a transaction at or above that xmin: it sorts after every row
 * read. A short page hands out (xmin, 0) as `next`, so a quiet tenant's cursor moves on too.
 * The price: a long transaction anywhere on the server holds the feed back until it ends.
 */
export async function readChanges(
  pool: pg.Pool,
  sql: Statements,
  p: { tenant?: string; after?: ChangePosition; limit: number },
): Promise<ChangesPage> {
  const after = p.after ?? FEED_START;
  if (p.after !== undefined) await refuseExpired(pool, sql, p.after);
  const { rows } = await pool.query<ChangeRow>(sql.changesAfter, [
    p.tenant ?? null,
    String(after.tx),
    String(after.seq),
    p.limit,
  ]);
  const xmin = rows[0]!.xmin;
  const changes = rows.filter((r) => r.tx !== null).map(toChange);
  const last = changes[changes.length - 1];
  if (changes.length === p.limit) return { changes, next: last!.cursor };
  // Everything readable was read: the next row to commit sorts at (xmin, 1) or after.
  const head = { tx: BigInt(xmin), seq: 0n };
  const next = compareChangePositions(head, after) > 0 ? head : after;
  return { changes, next: formatChangeCursor(next) };
}

/** Where a live view starts: after everything readable now. */
export async function headCursor(pool: pg.Pool, sql: Statements): Promise<string> {
  const { rows } = await pool.query<{ xmin: string }>(sql.changesHead);
  return formatChangeCursor({ tx: BigInt(rows[0]!.xmin), seq: 0n });
}

/**
 * Removes the oldest changes made before `before`, at most `limit`, stopping at the first
 * newer one, and records how far it went (in the same transaction).
 */
export async function purgeChanges(
  pool: pg.Pool,
  sql: Statements,
  before: number,
  limit: number,
): Promise<number> {
  return inTransaction(pool, async (c) => {
    const { rows } = await c.query<{ tx: string; seq: number; at: number }>(sql.changesOldest, [
      limit,
    ]);
    const stop = rows.findIndex((r) => r.at >= before);
    const n = stop === -1 ? rows.length : stop;
    if (n === 0) return 0;
    const last = rows[n - 1]!;
    await c.query(sql.changesDeleteThrough, [last.tx, last.seq]);
    await c.query(sql.purgedThroughSet, [`${last.tx}.${last.seq}`]);
    return n;
  });
}

async function refuseExpired(pool: pg.Pool, sql: Statements, after: ChangePosition): Promise<void> {
  const { rows } = await pool.query<{ value: string }>(sql.purgedThroughGet);
  const value = rows[0]?.value;
  if (value === undefined) return;
  const purged = parseChangeCursor(value);
  if (compareChangePositions(after, purged) < 0) {
    throw new ChangeCursorExpiredError(formatChangeCursor(after), value);
  }
}

function toChange(r: ChangeRow): StoredChange {
  return {
    cursor: `${r.tx}.${r.seq}`,
    kind: r.kind,
    id: r.job_id,
    tenant: r.tenant,
    status: r.status,
    dueAt: Number(r.due_at),
    attempts: r.attempts,
    error: r.error,
    at: Number(r.at),
  };
}
