import type pg from "pg";
import { newPendingJob, type Job, type NewJob } from "../../core/job.js";
import type { InsertResult } from "../../store/store.js";
import { insertArrays, rowToJob, type JobRow, type Placements } from "./rows.js";
import type { Statements } from "./statements.js";

/** Thrown inside the transaction when a key's live job finished under us: the caller retries. */
class KeyMovedError extends Error {
  readonly code = "40001"; // treated like a serialization failure by withRetry
}

/**
 * Inserts a batch where some jobs carry idempotency keys, inside the caller's transaction:
 *  1. keys are claimed in job_keys (primary key (tenant, key)); a key held by a live job,
 *     or by a concurrent insert that commits first, makes its row a no-op;
 *  2. the jobs whose key is taken are answered with the live job holding it;
 *  3. every other job is inserted in one statement.
 * A key repeated inside the batch counts once: the first occurrence wins.
 */
export async function insertKeyed(
  client: pg.ClientBase,
  sql: Statements,
  jobs: readonly NewJob[],
  place: Placements,
  now: number,
): Promise<InsertResult[]> {
  const firstOfKey = new Map<string, number>();
  const keyed: number[] = [];
  jobs.forEach((j, i) => {
    if (j.key === null) return;
    const k = keyOf(j.tenant, j.key);
    if (firstOfKey.has(k)) return;
    firstOfKey.set(k, i);
    keyed.push(i);
  });
  const took = await client.query<{ id: string }>(sql.keysClaim, [
    keyed.map((i) => jobs[i]!.tenant),
    keyed.map((i) => jobs[i]!.key),
    keyed.map((i) => place.shard[i]!),
    keyed.map((i) => jobs[i]!.id),
  ]);
  const tookIds = new Set(took.rows.map((r) => r.id));
  const existing = await existingByKey(
    client,
    sql,
    keyed.flatMap((i) => (tookIds.has(jobs[i]!.id) ? [] : [jobs[i]!])),
  );
  const fresh: number[] = [];
  jobs.forEach((j, i) => {
    if (j.key === null || (firstOfKey.get(keyOf(j.tenant, j.key)) === i && tookIds.has(j.id))) {
      fresh.push(i);
    }
  });
  if (fresh.length > 0) await client.query(sql.liveInsert, insertArrays(jobs, place, now, fresh));
  const stored = (i: number) => newPendingJob(jobs[i]!, place.bucket[i]!, place.shard[i]!, now);
  return jobs.map((j, i) => {
    if (j.key === null) return { job: stored(i), created: true };
    const k = keyOf(j.tenant, j.key);
    const first = firstOfKey.get(k)!;
    if (tookIds.has(jobs[first]!.id)) return { job: stored(first), created: first === i };
    return { job: existing.get(k)!, created: false };
  });
}

async function existingByKey(
  client: pg.ClientBase,
  sql: Statements,
  taken: readonly NewJob[],
): Promise<Map<string, Job>> {
  const out = new Map<string, Job>();
  if (taken.length === 0) return out;
  const holders = await client.query<{ tenant: string; key: string; shard: number; id: string }>(
    sql.keysLookup,
    [taken.map((j) => j.tenant), taken.map((j) => j.key)],
  );
  const rows = await client.query<JobRow>(sql.liveJobsByIds, [
    holders.rows.map((h) => h.shard),
    holders.rows.map((h) => h.id),
  ]);
  const byId = new Map(rows.rows.map((r) => [r.id, rowToJob(r)]));
  for (const h of holders.rows) {
    const job = byId.get(h.id);
    if (job) out.set(keyOf(h.tenant, h.key), job);
  }
  for (const j of taken) {
    if (!out.has(keyOf(j.tenant, j.key!))) {
      throw new KeyMovedError(`the live job holding key ${j.key} finished meanwhile`);
    }
  }
  return out;
}

function keyOf(tenant: string, key: string): string {
  return `${tenant}\u0000${key}`;
}
