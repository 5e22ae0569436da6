/**
 * What the failover run reads straight from a server (never through duetime): the standby's
 * view of the jobs at the moment the primary died, and whether the promoted one has drained.
 */
import pg from "pg";

/** Which table held each job on the standby, read after the kill and before the promotion. */
export interface StandbyView {
  /** Claimed: in flight on the primary when it died, as far as the standby knows. */
  readonly claimed: ReadonlySet<string>;
  /** Pending. */
  readonly live: ReadonlySet<string>;
  /** Succeeded, dead, cancelled or expired. */
  readonly history: ReadonlySet<string>;
  /**
   * Replay caught up with what the standby had received, or stood still for 100 ms (false:
   * read anyway after 10 s).
   */
  readonly caughtUp: boolean;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Reads the standby (a hot standby answers reads) once it has replayed all the WAL it
 * received from the dead primary: every job's table there is what a promotion starts from.
 */
export function standbyView(url: string, schema: string): Promise<StandbyView> {
  return withClient(url, async (c) => {
    // Replay may stop short of the receive position for good: the last record the dead
    // primary sent can be torn. Caught up is replay at the received position, or still.
    const deadline = Date.now() + 10_000;
    let caughtUp = false;
    let last = "";
    let still = 0;
    while (!caughtUp && Date.now() < deadline) {
      const { rows } = await c.query<{ replay: string; done: boolean }>(
        "SELECT pg_last_wal_replay_lsn()::text AS replay, pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn() AS done",
      );
      const replay = rows[0]?.replay ?? "";
      still = replay === last ? still + 1 : 0;
      last = replay;
      caughtUp = rows[0]?.done === true || still >= 5;
      if (!caughtUp) await new Promise((r) => setTimeout(r, 20));
    }
    const ids = async (table: string): Promise<Set<string>> => {
      const { rows } = await c.query<{ id: string }>(`SELECT id FROM "${schema}".${table}`);
      return new Set(rows.map((r) => r.id));
    };
    return {
      claimed: await ids("jobs_claimed"),
      live: await ids("jobs_live"),
      history: await ids("jobs_history"),
      caughtUp,
    };
  });
}

/**
 * True once the (promoted) server has no claimed job and no pending one due by `dueBy`:
 * everything of the run has fired and been recorded, claims lost with the dead primary
 * included (they come back when their leases run out).
 */
export function drained(url: string, schema: string, dueBy: number): Promise<boolean> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM "${schema}".jobs_claimed)::int
            + (SELECT count(*) FROM "${schema}".jobs_live WHERE due_at <= $1::bigint)::int AS n`,
      [dueBy],
    );
    return rows[0]?.n === 0;
  });
}
