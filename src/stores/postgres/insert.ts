import type pg from "pg";
import { bucketOf } from "../../core/buckets.js";
import { newPendingJob, replacementDueAt, type Job, type NewJob } from "../../core/job.js";
import { tagsColumn } from "../../core/tags.js";
import { callbacksColumn } from "../../core/callbacks.js";
import type { InsertResult } from "../../store/store.js";
import { insertArrays, rowToJob, type JobRow, type Placements } from "./rows.js";
import type { Statements } from "./statements.js";
import type { InsertedRow } from "./pauses.js";

/** Thrown inside the transaction when a key's live job finished under us: the caller retries. */
class KeyMovedError extends Error {
  readonly code = "40001"; // treated like a serialization failure by withRetry
}

/**
 * Inserts a batch where some jobs carry idempotency keys, inside the caller's transaction:
 *  1. keys are claimed in job_keys (primary key (tenant, key)); a key held by a live job,
 *     or by a concurrent insert that commits first, makes its row a no-op;
 *  2. the jobs whose key is taken are answered with the live job holding it, or (keyMode
 *     replace/debounce) replace it while it is pending: the holders' key rows are locked
 *     first (FOR UPDATE, in key order), so two concurrent replacements of one key apply one
 *     after the other instead of the second finding the row moved and answering too-late;
 *  3. every other job is inserted in one statement.
 * A key repeated inside the batch counts once: the first occurrence wins. The new rows an
 * active pause covers are held by `hold` (pauses.ts), in the same transaction.
 */
export async function insertKeyed(
  client: pg.ClientBase,
  sql: Statements,
  jobs: readonly NewJob[],
  place: Placements,
  now: number,
  bucketWidthMs: number,
  hold: (client: pg.ClientBase, rows: readonly InsertedRow[]) => Promise<Map<string, string>>,
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
  const taken = keyed.flatMap((i) => (tookIds.has(jobs[i]!.id) ? [] : [jobs[i]!]));
  const existing = await existingByKey(client, sql, taken);
  const answers = new Map<string, InsertResult>();
  for (const j of taken) {
    const k = keyOf(j.tenant, j.key!);
    answers.set(k, await answerHolder(client, sql, existing.get(k)!, j, now, bucketWidthMs));
  }
  const fresh: number[] = [];
  jobs.forEach((j, i) => {
    if (j.key === null || (firstOfKey.get(keyOf(j.tenant, j.key)) === i && tookIds.has(j.id))) {
      fresh.push(i);
    }
  });
  const inserted =
    fresh.length > 0
      ? (await client.query<InsertedRow>(sql.liveInsert, insertArrays(jobs, place, now, fresh)))
          .rows
      : [];
  const held = await hold(client, inserted);
  const stored = (i: number): Job => ({
    ...newPendingJob(jobs[i]!, place.bucket[i]!, place.shard[i]!, now),
    pausedBy: held.get(jobs[i]!.id) ?? null,
  });
  return jobs.map((j, i): InsertResult => {
    if (j.key === null) return { job: stored(i), created: true, outcome: "created" };
    const k = keyOf(j.tenant, j.key);
    const first = firstOfKey.get(k)!;
    if (tookIds.has(jobs[first]!.id)) {
      return first === i
        ? { job: stored(first), created: true, outcome: "created" }
        : { job: stored(first), created: false, outcome: "existing" };
    }
    const answer = answers.get(k)!;
    return first === i ? answer : { job: answer.job, created: false, outcome: "existing" };
  });
}

/**
 * A key's live holder met by a new job: kept (`keep`), too late (claimed), or replaced: its
 * row leaves jobs_live and comes back with the new definition (to its new partition). The
 * key row is locked, so the holder cannot be replaced by anyone else meanwhile; a claim can
 * still take it first, which the replacement finds as no row: too late.
 */
async function answerHolder(
  client: pg.ClientBase,
  sql: Statements,
  holder: Job,
  j: NewJob,
  now: number,
  bucketWidthMs: number,
): Promise<InsertResult> {
  if ((j.keyMode ?? "keep") === "keep") return { job: holder, created: false, outcome: "existing" };
  if (holder.status === "pending") {
    const dueAt = replacementDueAt(holder, j);
    const { rows } = await client.query<JobRow>(sql.replace, [
      holder.shard,
      holder.id,
      dueAt,
      bucketOf(dueAt, bucketWidthMs),
      j.payloadJson ?? JSON.stringify(j.payload),
      j.target,
      j.targetOptions === null ? null : JSON.stringify(j.targetOptions),
      j.maxAttempts,
      j.expireAfterMs,
      now,
      j.traceContext ?? null,
      tagsColumn(j.tags),
      callbacksColumn(j.callbacks),
    ]);
    if (rows[0]) return { job: rowToJob(rows[0]), created: false, outcome: "replaced" };
  }
  const { rows } = await client.query<JobRow>(sql.liveJobsByIds, [[holder.shard], [holder.id]]);
  const current = rows[0];
  if (!current) throw new KeyMovedError(`the live job holding key ${j.key} finished meanwhile`);
  return { job: rowToJob(current), created: false, outcome: "too-late" };
}

async function existingByKey(
  client: pg.ClientBase,
  sql: Statements,
  taken: readonly NewJob[],
): Promise<Map<string, Job>> {
  const out = new Map<string, Job>();
  if (taken.length === 0) return out;
  const replacing = taken.some((j) => (j.keyMode ?? "keep") !== "keep");
  const holders = await client.query<{ tenant: string; key: string; shard: number; id: string }>(
    replacing ? sql.keysLock : sql.keysLookup,
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
