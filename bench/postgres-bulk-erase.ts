import { Scheduler } from "../src/api/scheduler.js";
import { ManualClock } from "../src/core/clock.js";
import type { PostgresStore } from "../src/stores/postgres/postgres-store.js";
import { note } from "./lib/progress.js";
import { fmt, rate, type BenchResult, type GoalRow } from "./lib/report.js";
import { DAY, benchStore, dropStore, loadBacklog, type PgSizes } from "./postgres-common.js";

/**
 * Issue 13 §3 on PostgreSQL: a bulk cancel and a bulk erase by tag beside a large untagged
 * backlog. One schema: `eraseBacklog` pending jobs (bulk-loaded, due 1 to 31 days ahead),
 * then `eraseJobs` jobs of tag `cancel:me` and as many of `erase:me` (scheduleMany, each
 * with a second tag, a third of them keyed, spread over the same 30 days). A Scheduler that
 * is not started runs `startOperation` + `runOperation` (batches of operationBatchSize,
 * default 2,000) for each tag, cancel first, then the erase, which meets the erased jobs in
 * jobs_live. Reported: jobs/s of each from the call's wall time, and the operation's count.
 */
export async function pgBulkErase(sizes: PgSizes): Promise<BenchResult> {
  const store = await benchStore("bulk_erase", 33);
  try {
    const now = Date.now();
    const scheduler = new Scheduler({ store, clock: new ManualClock(now) });
    note(`bulk-erase: loading ${sizes.eraseBacklog.toLocaleString("en-US")} untagged jobs`);
    await loadBacklog(store, sizes.eraseBacklog, now + DAY, 30 * DAY);
    for (const tag of ["cancel:me", "erase:me"]) await scheduleTagged(scheduler, tag, sizes, now);
    await store.connection.query("VACUUM ANALYZE");
    const cancel = await timed(scheduler, "cancel", "cancel:me");
    const erase = await timed(scheduler, "erase", "erase:me");
    await checkGone(store);
    return report(sizes, cancel, erase);
  } finally {
    await dropStore(store);
  }
}

async function scheduleTagged(s: Scheduler, tag: string, sizes: PgSizes, now: number) {
  note(`bulk-erase: scheduling ${sizes.eraseJobs.toLocaleString("en-US")} jobs of ${tag}`);
  const span = 30 * DAY;
  for (let i = 0; i < sizes.eraseJobs; i += 1000) {
    const n = Math.min(1000, sizes.eraseJobs - i);
    await s.scheduleMany(
      Array.from({ length: n }, (_, k) => {
        const at = i + k;
        return {
          target: "noop",
          dueAt: now + DAY + Math.floor((at * span) / sizes.eraseJobs),
          payload: { at },
          tags: [tag, `other:${at % 13}`],
          ...(at % 3 === 0 ? { key: `${tag}/${at}` } : {}),
        };
      }),
    );
  }
}

async function timed(
  s: Scheduler,
  kind: "cancel" | "erase",
  tag: string,
): Promise<{ ms: number; changed: number }> {
  note(`bulk-erase: ${kind} of ${tag}`);
  const t = performance.now();
  const { operation } = await s.startOperation({ kind, filter: { tags: [tag] } });
  const done = await s.runOperation(operation.id);
  const ms = performance.now() - t;
  if (done.state !== "done") throw new Error(`bulk-erase: ${kind} ended ${done.state}`);
  return { ms, changed: done.changed };
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

function report(
  sizes: PgSizes,
  cancel: { ms: number; changed: number },
  erase: { ms: number; changed: number },
): BenchResult {
  const backlog = sizes.eraseBacklog.toLocaleString("en-US");
  const row = (what: string, r: { ms: number; changed: number }): GoalRow => ({
    metric: `${what} ${r.changed.toLocaleString("en-US")} tagged jobs beside ${backlog}, jobs/s`,
    value: rate(r.changed / (r.ms / 1000)),
    goal: "-",
    baseline: "-",
    ratio: "-",
    pass: null,
  });
  return {
    name: "postgres-bulk-erase",
    title: `PostgreSQL bulk cancel and erase by tag beside ${backlog} untagged jobs`,
    goals: [row("cancel", cancel), row("erase", erase)],
    details: [],
    notes: [
      `startOperation + runOperation on a Scheduler not started, batches of 2,000; cancel ${fmt(cancel.ms / 1000, 2)} s, erase ${fmt(erase.ms / 1000, 2)} s`,
      "checked after: no tag entry or key of the erased jobs left",
    ],
  };
}
