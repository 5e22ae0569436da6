import type pg from "pg";
import { inTransaction } from "./connection.js";
import type { JobRow } from "./rows.js";
import type { Statements } from "./statements.js";

/** A dead job's idempotency key is held by another live job: the retry is refused. */
class KeyHeld extends Error {
  constructor(readonly holder: string) {
    super(`idempotency key held by ${holder}`);
  }
}

/**
 * One attempt of a reschedule (pending -> pending: one statement) or a retry (dead ->
 * pending: in one transaction, the job first takes its idempotency key back; when another
 * live job holds it, everything rolls back and the holder's id comes back instead).
 * No row and no holder: the job was not in the expected state; the caller reads it to say why.
 */
export async function moveOnce(
  pool: pg.Pool,
  sql: Statements,
  from: "pending" | "dead",
  key: [shard: number, id: string],
  args: unknown[],
): Promise<{ rows: JobRow[]; holder?: string }> {
  if (from === "pending") return { rows: (await pool.query<JobRow>(sql.reschedule, args)).rows };
  try {
    return await inTransaction(pool, async (c) => {
      await c.query(sql.retryKeyTake, key);
      const held = await c.query<{ id: string }>(sql.retryKeyHolder, key);
      if (held.rows[0]) throw new KeyHeld(held.rows[0].id);
      return { rows: (await c.query<JobRow>(sql.retryDead, args)).rows };
    });
  } catch (err) {
    if (err instanceof KeyHeld) return { rows: [], holder: err.holder };
    throw err;
  }
}
