import type Database from "better-sqlite3";
import { Progress } from "./progress.js";

/**
 * The physical baseline of firing: the least SQL work that takes a due job through
 * pending -> claimed -> succeeded in the store's own tables with plain better-sqlite3,
 * oldest bucket first, 500 per claim transaction and one settle transaction per batch,
 * calling `handler` in between. Like the store, it writes a lease row per claimed job and
 * an outcome row per finished one, and never the jobs row; it skips the hot table,
 * counters, fencing checks and the async engine. The file must hold only pending jobs.
 */
export function rawDrain(
  db: Database.Database,
  opts: { expected: number; until: number; label: string; handler: (row: RawRow) => void },
): number {
  // One bucket at a time, in seq order, then the next bucket: two index seeks per batch.
  const inBucket = db.prepare(`
    SELECT seq, id, due_at, bucket, payload FROM jobs INDEXED BY jobs_bucket
    WHERE bucket = @bucket AND seq > @seq ORDER BY seq LIMIT 500`);
  const nextBucket = db.prepare(`
    SELECT bucket FROM jobs INDEXED BY jobs_bucket WHERE bucket > @bucket AND bucket <= @until
    ORDER BY bucket LIMIT 1`);
  const next = (cursor: { bucket: number; seq: number }): RawRow[] => {
    const rows = inBucket.all(cursor) as RawRow[];
    if (rows.length > 0) return rows;
    const b = nextBucket.get({ bucket: cursor.bucket, until: opts.until }) as
      { bucket: number } | undefined;
    return b ? (inBucket.all({ bucket: b.bucket, seq: 0 }) as RawRow[]) : [];
  };
  const claim = db.prepare(`
    INSERT INTO claims (id, seq, due_at, bucket, tenant, owner, lease_expires_at, fence,
      attempts, version, last_error, fired_at, claimed_at)
    SELECT id, seq, due_at, bucket, tenant, 'raw', @lease, fence + 1, attempts + 1, version + 1,
      last_error, fired_at, @now
    FROM jobs WHERE seq IN (SELECT value FROM json_each(@seqs))`);
  const finish = db.prepare(`
    INSERT INTO finished (seq, due_at, id, tenant, status, attempts, fence, version,
      last_error, last_result, fired_at, finished_at)
    SELECT c.seq, c.due_at, c.id, c.tenant, 'succeeded', c.attempts, c.fence, c.version + 1,
      NULL, 'null', @now, @now
    FROM json_each(@ids) s JOIN claims c ON c.id = s.value`);
  const unclaim = db.prepare(`DELETE FROM claims WHERE id IN (SELECT value FROM json_each(?))`);
  const claimTx = db.transaction((cursor: { bucket: number; seq: number }, now: number) => {
    const rows = next(cursor);
    if (rows.length > 0) claim.run({ now, lease: now + 60_000, seqs: seqsOf(rows) });
    return rows;
  });
  const finishTx = db.transaction((ids: string, now: number) => {
    finish.run({ ids, now });
    unclaim.run(ids);
  });
  const p = new Progress(opts.label, opts.expected);
  let done = 0;
  let cursor = { bucket: Number.MIN_SAFE_INTEGER, seq: 0 };
  const t = performance.now();
  for (;;) {
    const rows = claimTx.immediate(cursor, Date.now());
    const last = rows[rows.length - 1];
    if (!last) break;
    cursor = { bucket: last.bucket, seq: last.seq };
    // Read in (bucket, seq) order; hand them out oldest bucket first, by due time.
    rows.sort((a, b) => a.bucket - b.bucket || a.due_at - b.due_at);
    for (const r of rows) {
      JSON.parse(r.payload);
      opts.handler(r);
    }
    finishTx.immediate(JSON.stringify(rows.map((r) => r.id)), Date.now());
    done += rows.length;
    p.update(done);
  }
  const rate = done / ((performance.now() - t) / 1000);
  p.done(`${Math.round(rate).toLocaleString("en-US")}/s`);
  if (done !== opts.expected)
    throw new Error(`${opts.label}: drained ${done}, expected ${opts.expected}`);
  return rate;
}

function seqsOf(rows: readonly RawRow[]): string {
  return JSON.stringify(rows.map((r) => r.seq));
}

export interface RawRow {
  seq: number;
  id: string;
  due_at: number;
  bucket: number;
  payload: string;
}
