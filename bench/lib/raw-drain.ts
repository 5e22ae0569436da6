import type Database from "better-sqlite3";
import { Progress } from "./progress.js";

/**
 * The physical baseline of firing: the least SQL work that takes a due job through
 * pending -> claimed -> succeeded with plain better-sqlite3, oldest bucket first, 500 per
 * claim transaction and one settle transaction per batch, calling `handler` in between.
 * It keeps the store's indexes (so every index entry the store must move, it moves too)
 * but skips the hot table, counters, leases checks and the async engine.
 */
export function rawDrain(
  db: Database.Database,
  opts: { expected: number; until: number; label: string; handler: (row: RawRow) => void },
): number {
  const claim = db.prepare(`
    UPDATE jobs SET status = 'claimed', lease_owner = 'raw', lease_expires_at = @lease,
      fence = fence + 1, attempts = attempts + 1, version = version + 1, updated_at = @now
    WHERE seq IN (SELECT seq FROM jobs INDEXED BY jobs_pending_bucket
      WHERE status = 'pending' AND bucket <= @until ORDER BY bucket, seq LIMIT 500)
    RETURNING seq, id, due_at, bucket, payload`);
  const finish = db.prepare(`
    UPDATE jobs SET status = 'succeeded', lease_owner = NULL, lease_expires_at = NULL,
      version = version + 1, updated_at = @now, fired_at = @now, finished_at = @now
    WHERE seq = @seq AND status = 'claimed'`);
  const claimTx = db.transaction(
    (now: number) => claim.all({ now, lease: now + 60_000, until: opts.until }) as RawRow[],
  );
  const finishTx = db.transaction((rows: RawRow[], now: number) => {
    for (const r of rows) finish.run({ seq: r.seq, now });
  });
  const p = new Progress(opts.label, opts.expected);
  let done = 0;
  const t = performance.now();
  for (;;) {
    const rows = claimTx.immediate(Date.now());
    if (rows.length === 0) break;
    // RETURNING yields rows in table order; hand them out oldest bucket first.
    rows.sort((a, b) => a.bucket - b.bucket || a.due_at - b.due_at);
    for (const r of rows) {
      JSON.parse(r.payload);
      opts.handler(r);
    }
    finishTx.immediate(rows, Date.now());
    done += rows.length;
    p.update(done);
  }
  const rate = done / ((performance.now() - t) / 1000);
  p.done(`${Math.round(rate).toLocaleString("en-US")}/s`);
  if (done !== opts.expected)
    throw new Error(`${opts.label}: drained ${done}, expected ${opts.expected}`);
  return rate;
}

export interface RawRow {
  seq: number;
  id: string;
  due_at: number;
  bucket: number;
  payload: string;
}
