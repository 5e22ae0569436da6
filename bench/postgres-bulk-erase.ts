import { Scheduler } from "../src/api/scheduler.js";
import { ManualClock } from "../src/core/clock.js";
import type { OperationKind, OperationParams } from "../src/core/operation.js";
import type { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import { note } from "./lib/progress.js";
import { fmt, rate, type BenchResult, type GoalRow } from "./lib/report.js";
import {
  DAY,
  benchStore,
  dropStore,
  loadBacklog,
  pgCpuMs,
  type PgSizes,
} from "./postgres-common.js";

/**
 * Issue 13 §3 on PostgreSQL: bulk operations by tag beside a large untagged backlog. One
 * schema: `eraseBacklog` pending jobs (bulk-loaded, due 1 to 31 days ahead), then
 * `eraseJobs` jobs of each of the tags `cancel:me`, `erase:me` and `reschedule:me`
 * (scheduleMany, each with a second tag, a third of them keyed, spread over the same 30
 * days) and as many of `retry:me`, due at once, claimed and settled dead (jobs_history,
 * beside `eraseBacklog` / 10 finished jobs loaded into the same history partition). A
 * Scheduler that is not started runs `startOperation` + `runOperation` (batches of
 * operationBatchSize, default 2,000) for each tag: a cancel, an erase (which meets its jobs
 * in jobs_live), a reschedule shifting each job by an hour, a retry of the dead jobs back to
 * pending. Reported: jobs/s of each from the call's wall time, and the CPU the call cost per
 * job (this process and the whole PostgreSQL server), a figure the shared machine's other
 * load disturbs less.
 */
export async function pgBulkErase(sizes: PgSizes): Promise<BenchResult> {
  const store = await benchStore("bulk_erase", 33);
  try {
    const now = Date.now();
    const scheduler = new Scheduler({ store, clock: new ManualClock(now) });
    note(`bulk-erase: loading ${sizes.eraseBacklog.toLocaleString("en-US")} untagged jobs`);
    await loadBacklog(store, sizes.eraseBacklog, now + DAY, 30 * DAY);
    for (const tag of ["cancel:me", "erase:me", "reschedule:me"]) {
      await scheduleTagged(scheduler, tag, sizes, now + DAY, 30 * DAY);
    }
    await scheduleTagged(scheduler, "retry:me", sizes, now - 1000, 0);
    await settleDead(store, now, sizes.eraseJobs);
    await loadHistory(store, sizes.eraseBacklog / 10, now);
    await store.connection.query("VACUUM ANALYZE");
    const runs: Run[] = [];
    runs.push(await timed(scheduler, store, "cancel", "cancel:me", {}));
    runs.push(await timed(scheduler, store, "erase", "erase:me", {}));
    await checkGone(store);
    runs.push(await timed(scheduler, store, "reschedule", "reschedule:me", { shiftMs: 3_600_000 }));
    runs.push(await timed(scheduler, store, "retry", "retry:me", { dueAt: now + DAY }));
    for (const r of runs) {
      if (r.changed !== sizes.eraseJobs)
        throw new Error(`bulk-erase: ${r.kind} changed ${r.changed}`);
    }
    return report(sizes, runs);
  } finally {
    await dropStore(store);
  }
}

async function scheduleTagged(
  s: Scheduler,
  tag: string,
  sizes: PgSizes,
  from: number,
  span: number,
) {
  note(`bulk-erase: scheduling ${sizes.eraseJobs.toLocaleString("en-US")} jobs of ${tag}`);
  for (let i = 0; i < sizes.eraseJobs; i += 1000) {
    const n = Math.min(1000, sizes.eraseJobs - i);
    await s.scheduleMany(
      Array.from({ length: n }, (_, k) => {
        const at = i + k;
        return {
          target: "noop",
          dueAt: from + Math.floor((at * span) / sizes.eraseJobs),
          payload: { at },
          tags: [tag, `other:${at % 13}`],
          ...(at % 3 === 0 ? { key: `${tag}/${at}` } : {}),
        };
      }),
    );
  }
}

/** The jobs due by `now` (only retry:me's: the rest is a day ahead or more) claimed and settled dead. */
async function settleDead(store: PostgresStore, now: number, expected: number): Promise<void> {
  let dead = 0;
  for (;;) {
    const jobs = await store.jobsClaimDue({
      now,
      dueBefore: now,
      limit: 1000,
      leaseMs: 600_000,
      owner: "bench",
    });
    if (jobs.length === 0) break;
    await store.jobsSettle({
      now,
      settlements: jobs.map((j) => ({
        id: j.id,
        fence: j.fence,
        firedAt: now,
        outcome: "dead" as const,
        error: "bench",
      })),
    });
    dead += jobs.length;
  }
  if (dead !== expected) throw new Error(`bulk-erase: ${dead} jobs dead, not ${expected}`);
}

/**
 * `count` succeeded jobs of other tenants' in jobs_history, finished at `now` as the dead
 * ones were (their partition), server-side: the history a retry's batch meets.
 */
async function loadHistory(store: PostgresStore, count: number, now: number): Promise<void> {
  note(`bulk-erase: loading ${count.toLocaleString("en-US")} finished jobs`);
  const s = `"${store.schema}"`;
  await store.connection.query(
    `INSERT INTO ${s}.jobs_history (shard, id, tenant, key, due_at, bucket, payload, target,
       target_options, max_attempts, expire_after_ms, created_at, updated_at, status, finished_at)
     SELECT (g % $2)::int, 'H' || lpad(g::text, 25, '0'), 'default', NULL, $1::bigint,
       $1::bigint - ($1::bigint % $3::bigint), '{}', 'noop', NULL, 3, NULL, $1, $1, 'succeeded', $1
     FROM generate_series(1, $4::bigint) AS g`,
    [now, store.shardCount, store.bucketWidthMs, count],
  );
}

interface Run {
  kind: OperationKind;
  ms: number;
  changed: number;
  /** CPU of this process and of the PostgreSQL server during the call, µs. */
  clientCpuUs: number;
  serverCpuUs: number;
}

async function timed(
  s: Scheduler,
  store: PostgresStore,
  kind: Exclude<OperationKind, "count">,
  tag: string,
  params: OperationParams,
): Promise<Run> {
  note(`bulk-erase: ${kind} of ${tag}`);
  const server = await pgCpuMs(store);
  const client = process.cpuUsage();
  const t = performance.now();
  const { operation } = await s.startOperation({ kind, filter: { tags: [tag] }, ...params });
  const done = await s.runOperation(operation.id);
  const ms = performance.now() - t;
  const used = process.cpuUsage(client);
  const serverCpuUs = ((await pgCpuMs(store)) - server) * 1000;
  if (done.state !== "done") throw new Error(`bulk-erase: ${kind} ended ${done.state}`);
  return { kind, ms, changed: done.changed, clientCpuUs: used.user + used.system, serverCpuUs };
}

/** Nothing of the erased jobs is left: no tag entry, no feed row, no key. */
async function checkGone(store: PostgresStore): Promise<void> {
  const s = `"${store.schema}"`;
  const { rows } = await store.connection.query<{ tags: number; keys: number }>(
    `SELECT (SELECT count(*) FROM ${s}.job_tags WHERE tag = 'erase:me')::int AS tags,
       (SELECT count(*) FROM ${s}.job_keys WHERE key LIKE 'erase:me/%')::int AS keys`,
  );
  const left = rows[0]!;
  if (left.tags !== 0 || left.keys !== 0) {
    throw new Error(`bulk-erase: ${left.tags} tag entries and ${left.keys} keys left`);
  }
}

function report(sizes: PgSizes, runs: readonly Run[]): BenchResult {
  const backlog = sizes.eraseBacklog.toLocaleString("en-US");
  const row = (r: Run): GoalRow => ({
    metric: `${r.kind} ${r.changed.toLocaleString("en-US")} tagged jobs beside ${backlog}, jobs/s`,
    value: rate(r.changed / (r.ms / 1000)),
    goal: "-",
    baseline: "-",
    ratio: "-",
    pass: null,
  });
  return {
    name: "postgres-bulk-erase",
    title: `PostgreSQL bulk cancel, erase, reschedule and retry by tag beside ${backlog} untagged jobs`,
    goals: runs.map(row),
    details: [],
    notes: [
      `startOperation + runOperation on a Scheduler not started, batches of 2,000; ${runs
        .map((r) => `${r.kind} ${fmt(r.ms / 1000, 2)} s`)
        .join(", ")}`,
      `CPU per job, client + server µs: ${runs
        .map(
          (r) =>
            `${r.kind} ${fmt(r.clientCpuUs / r.changed, 0)} + ${fmt(r.serverCpuUs / r.changed, 0)}`,
        )
        .join(", ")}`,
      "checked after: no tag entry or key of the erased jobs left; each operation changed every job of its tag",
      `reschedule shifts each job by 1 h; retry sets the dead jobs due a day ahead, beside ${(sizes.eraseBacklog / 10).toLocaleString("en-US")} finished jobs in their history partition`,
    ],
  };
}
