import { shardOf } from "../../core/ids.js";
import type { Job } from "../../core/job.js";
import { pauseCovering } from "../../core/pause.js";
import { ruleFromParts } from "../../core/recurrence/index.js";
import {
  advanceStep,
  occurrenceExpireAfterMs,
  type MisfirePolicy,
  type SeriesAdvance,
} from "../../core/series-advance.js";
import { brokenReason, recurrenceOf } from "../../core/series.js";
import { claimedOccurrences } from "../../store/series-step.js";
import type { SqliteContext } from "./context.js";
import { activePauses, holdJobs, type Holdable } from "./held.js";
import type { CounterDeltas } from "./rows.js";

/**
 * A claim's series step on SQLite, for the whole batch, in the claim's transaction, set-wise:
 * the series whose pending occurrence was claimed are read as groups that step alike
 * (seriesStepGroups: the same rule, policy, pending time and tenant, so the same decision;
 * each group's ids in one JSON array), the decision is made once a group (advanceStep, the
 * decision advanceSeries makes), and each group is written by three statements: the series
 * rows (their counters moved in SQL), the next occurrences (their template copied from the
 * series row in SQL, never read into JavaScript) and their feed rows. Daily series due at
 * one instant share a rule, so a claim of 500 occurrences is a handful of statements, not
 * 500 updates and the rows' 24 columns read, decoded and bound back (a claim of 500 held the
 * event loop 17-21 ms against 8 ms for 500 one-shot jobs at 1M series).
 *
 * A job its series no longer names advances nothing (the read takes only series whose
 * `next_job_id` is a claimed job): its occurrence was claimed before (a re-claim after a
 * lease ran out) or the series moved on, so an occurrence is neither skipped nor written
 * twice whatever crashed when. A group whose rule cannot be used ends each of its series
 * with the reason, and the claim goes on.
 */
export function advanceClaimed(
  ctx: SqliteContext,
  jobs: readonly Job[],
  now: number,
  newId: () => string,
  deltas: CounterDeltas,
): void {
  const claimed = claimedOccurrences(jobs);
  if (claimed === null) return;
  const groups = ctx.s.seriesStepGroups.all({
    series: JSON.stringify(claimed.seriesIds),
    jobs: JSON.stringify([...claimed.jobIds]),
  }) as GroupTuple[];
  for (const g of groups) {
    const ids = JSON.parse(g[G.ids]) as string[];
    let a: SeriesAdvance;
    try {
      a = advanceStep(representative(g), g[G.expireAfterMs], () => recurrenceOf(ruleOf(g)), now);
    } catch (err) {
      const reason = brokenReason(err);
      for (const id of ids) ctx.s.scheduleBreak.run({ id, reason, now });
      continue;
    }
    const next = nextIds(ctx, ids, a.next === null ? null : newId);
    ctx.s.seriesAdvanceGroup.run({
      next,
      state: a.next === null ? "ended" : "active",
      nextAt: a.next?.at ?? null,
      nominal: a.next?.key ?? null,
      missed: a.missedCount,
      lastMisfireAt: a.lastMisfireAt,
      catchUp: a.catchUpFired,
      now,
    });
    if (a.next !== null) insertGroup(ctx, g, a.next, next, now, deltas);
  }
}

/** A group as seriesStepGroups reads it (raw), in its column order. */
type GroupTuple = [
  tenant: string,
  target: string,
  ruleKind: "cron" | "rrule",
  rule: string,
  timeZone: string,
  gap: "skip" | "shift",
  overlap: "first" | "both",
  startAt: number | null,
  endAt: number | null,
  misfire: MisfirePolicy,
  misfireLimit: number,
  misfireToleranceMs: number,
  expireAfterMs: number | null,
  nextAt: number | null,
  catchUpFired: number,
  /** 1 when the claimed occurrence is the series' last by its count. */
  ends: number,
  /** The group's series ids, a JSON array. */
  ids: string,
];

/** Each column's place in a GroupTuple (series-statements.ts seriesStepGroups). */
const G = Object.freeze({
  tenant: 0,
  target: 1,
  ruleKind: 2,
  rule: 3,
  timeZone: 4,
  gap: 5,
  overlap: 6,
  startAt: 7,
  endAt: 8,
  misfire: 9,
  misfireLimit: 10,
  misfireToleranceMs: 11,
  expireAfterMs: 12,
  nextAt: 13,
  catchUpFired: 14,
  ends: 15,
  ids: 16,
});

/**
 * A series standing for its group in advanceStep: the group's decision fields, and the
 * counters that only pass through it at zero, so what it returns for them is what the claim
 * adds (missedCount: the missed to add; lastMisfireAt: now or null for "unchanged";
 * lastJobId is each row's own `next_job_id`, set in SQL). The count is the group's `ends`:
 * a first occurrence of a count of 1 ends exactly when fired_count + 1 >= max_count does.
 */
function representative(g: GroupTuple) {
  return {
    misfire: g[G.misfire],
    misfireLimit: g[G.misfireLimit],
    misfireToleranceMs: g[G.misfireToleranceMs],
    count: g[G.ends] === 1 ? 1 : null,
    nextJobId: null,
    nextAt: g[G.nextAt],
    firedCount: 0,
    missedCount: 0,
    lastMisfireAt: null,
    catchUpFired: g[G.catchUpFired],
  };
}

function ruleOf(g: GroupTuple) {
  return {
    rule: ruleFromParts(g[G.ruleKind], g[G.rule]),
    timeZone: g[G.timeZone],
    gap: g[G.gap],
    overlap: g[G.overlap],
    startAt: g[G.startAt],
    endAt: g[G.endAt],
  };
}

/**
 * The JSON object the group's statements take: each series id to [its next occurrence's job
 * id, that job's shard], or to null when the series ends. Built as text: ids are ULIDs,
 * nothing in them needs escaping.
 */
function nextIds(ctx: SqliteContext, ids: readonly string[], newId: (() => string) | null): string {
  let text = "{";
  for (let i = 0; i < ids.length; i++) {
    text += i === 0 ? '"' : ',"';
    if (newId === null) {
      text += `${ids[i]!}":null`;
    } else {
      const id = newId();
      text += `${ids[i]!}":["${id}",${shardOf(id, ctx.shardCount)}]`;
    }
  }
  return `${text}}`;
}

/**
 * The group's next occurrences, one insert copying each series' template; then what insertJobs
 * does for a new job (none has a key, tags or callbacks: core/series.ts occurrenceJob): the
 * counters, a feed row each, and the hot index when their bucket is staged, or held when an
 * active pause covers them. Their seqs are the ones after `last - inserted` (seq is the
 * rowid: see insert-statements.ts jobInsertRows).
 */
function insertGroup(
  ctx: SqliteContext,
  g: GroupTuple,
  next: { readonly at: number; readonly key: string },
  ids: string,
  now: number,
  deltas: CounterDeltas,
): void {
  const tenant = g[G.tenant];
  const bucket = ctx.bucketOf(next.at);
  const r = ctx.s.occurrencesInsert.run({
    next: ids,
    dueAt: next.at,
    bucket,
    nominal: next.key,
    expireAfterMs: occurrenceExpireAfterMs(
      g[G.misfire],
      g[G.expireAfterMs],
      g[G.misfireToleranceMs],
    ),
    now,
  });
  const n = r.changes;
  const after = Number(r.lastInsertRowid) - n;
  deltas.pending(bucket, tenant, n);
  deltas.status(tenant, "pending", n);
  ctx.recordJobsAfter({ kind: "scheduled", status: "pending" }, after, now);
  const pause = pauseCovering(activePauses(ctx), { tenant, target: g[G.target] });
  if (pause !== undefined) {
    const rows = ctx.s.jobsSeqIdAfter.all(after) as { seq: number; id: string }[];
    const held: Holdable[] = rows.map((j) => ({ ...j, tenant, dueAt: next.at, attempts: 0 }));
    holdJobs(ctx, new Map([[pause.id, held]]), now);
  } else if (ctx.isStaged(bucket)) {
    ctx.s.hotInsertJobsAfter.run(after);
  }
}
