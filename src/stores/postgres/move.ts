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

/** The retry's own statement matched nothing: the key taken before it must not stay taken. */
class NothingRetried extends Error {
  constructor() {
    super("the dead job was not retried");
  }
}

/**
 * One attempt of a reschedule (pending -> pending: one statement) or a retry (dead ->
 * pending: in one transaction, the job first takes its idempotency key back; when another
 * live job holds it, everything rolls back and the holder's id comes back instead).
 * No row and no holder: the job was not in the expected state (or not the caller's tenant's);
 * the caller reads it to say why. A retry that matched nothing rolls back whole, key included.
 */
export async function moveOnce(
  pool: pg.Pool,
  sql: Statements,
  from: "pending" | "dead",
  args: [
    shard: number,
    id: string,
    tenant: string | null,
    version: number | null,
    ...rest: unknown[],
  ],
): Promise<{ rows: JobRow[]; holder?: string }> {
  if (from === "pending") return { rows: (await pool.query<JobRow>(sql.reschedule, args)).rows };
  const [shard, id, tenant, version] = args;
  try {
    return await inTransaction(pool, async (c) => {
      await c.query(sql.retryKeyTake, [shard, id, tenant, version]);
      const held = await c.query<{ id: string }>(sql.retryKeyHolder, [shard, id, tenant]);
      if (held.rows[0]) throw new KeyHeld(held.rows[0].id);
      const rows = (await c.query<JobRow>(sql.retryDead, args)).rows;
      if (rows.length === 0) throw new NothingRetried();
      return { rows };
    });
  } catch (err) {
    if (err instanceof KeyHeld) return { rows: [], holder: err.holder };
    if (err instanceof NothingRetried) return { rows: [] };
    throw err;
  }
}
