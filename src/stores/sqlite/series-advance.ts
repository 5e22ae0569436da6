import { shardOf } from "../../core/ids.js";
import type { Job } from "../../core/job.js";
import {
  advanceStep,
  occurrenceExpireAfterMs,
  type MisfirePolicy,
  type SeriesAdvance,
} from "../../core/series-advance.js";
import { brokenReason, recurrenceOf } from "../../core/series.js";
import type { SqliteContext } from "./context.js";
import type { CounterDeltas } from "./rows.js";
import { NextOccurrences } from "./series-occurrences.js";
import { advanceRowWise, ruleFieldsAt } from "./series-rows.js";

/**
 * A claim's series step on SQLite, for the whole batch, in the claim's transaction. Series
 * that step alike (the same rule, policy, pending time, tenant and target: daily series due
 * at one instant) are stepped set-wise, a group at a time: read as one row of the group
 * (seriesStepGroups), the decision made once (advanceStep, the decision advanceSeries makes),
 * and written by two statements, the series rows (their counters moved in SQL) and the next
 * occurrences (their template copied from the series row in SQL, never read into
 * JavaScript). The others are stepped row-wise (series-rows.ts): a statement costs a few us
 * besides its rows, and grouping rows that are all different costs more than reading them.
 * Which series go which way is told from the claimed occurrences themselves (their tenant,
 * target and due time, which their series share): a series alone in its kind goes row-wise.
 * Both paths insert the next occurrences through NextOccurrences (counters, feed rows, hot
 * index or pause).
 *
 * A job its series no longer names advances nothing (both reads take only series whose
 * `next_job_id` is a claimed job): its occurrence was claimed before (a re-claim after a
 * lease ran out) or the series moved on, so an occurrence is neither skipped nor written
 * twice whatever crashed when. A series whose rule cannot be used ends with the reason, and
 * the claim goes on.
 */
export function advanceClaimed(
  ctx: SqliteContext,
  jobs: readonly Job[],
  now: number,
  newId: () => string,
  deltas: CounterDeltas,
): void {
  const kinds = new Map<string, Job[]>();
  for (const j of jobs) {
    if (j.scheduleId === null) continue;
    const kind = `${j.tenant}\u0000${j.target}\u0000${j.dueAt}`;
    const same = kinds.get(kind);
    if (same === undefined) kinds.set(kind, [j]);
    else same.push(j);
  }
  if (kinds.size === 0) return;
  const alone: Job[] = [];
  const together: Job[] = [];
  for (const same of kinds.values()) (same.length === 1 ? alone : together).push(...same);
  const written = new NextOccurrences(ctx, now, deltas);
  // series whose template json_valid refused go row-wise, which decodes it (templateBreak)
  const undecoded = together.length > 0 ? advanceSetWise(ctx, together, now, newId, written) : [];
  if (alone.length > 0 || undecoded.length > 0) {
    const seriesIds = new Set(alone.map((j) => j.scheduleId!));
    const jobIds = new Set(alone.map((j) => j.id));
    if (undecoded.length > 0) {
      const retried = new Set(undecoded);
      for (const id of undecoded) seriesIds.add(id);
      for (const j of together) if (retried.has(j.scheduleId!)) jobIds.add(j.id);
    }
    advanceRowWise(ctx, [...seriesIds], jobIds, now, newId, written);
  }
  written.finish();
}

/**
 * The series of `jobs` stepped set-wise, a group at a time (seriesStepGroups). Returns the
 * series of groups whose template SQLite could not decode, left for the row-wise step.
 */
function advanceSetWise(
  ctx: SqliteContext,
  jobs: readonly Job[],
  now: number,
  newId: () => string,
  written: NextOccurrences,
): string[] {
  const undecoded: string[] = [];
  // series id to claimed job id, as text; a series named twice (a re-claimed occurrence
  // beside its pending one) matches on the job it names
  let pairs = "{";
  for (const j of jobs) {
    pairs += `${pairs.length === 1 ? "" : ","}${JSON.stringify(j.scheduleId)}:${JSON.stringify(j.id)}`;
  }
  const groups = ctx.s.seriesStepGroups.all(`${pairs}}`) as GroupTuple[];
  for (const g of groups) {
    const ids = JSON.parse(g[G.ids]) as string[];
    if (g[G.decodes] !== 1) {
      undecoded.push(...ids);
      continue;
    }
    let a: SeriesAdvance;
    try {
      a = advanceStep(
        representative(g),
        g[G.expireAfterMs],
        () => recurrenceOf(ruleFieldsAt(g, G.ruleKind)),
        now,
      );
    } catch (err) {
      const reason = brokenReason(err);
      for (const id of ids) ctx.s.scheduleBreak.run({ id, reason, now });
      continue;
    }
    const map = nextIds(ctx, ids, a.next === null ? null : newId);
    ctx.s.seriesAdvanceGroup.run(
      a.next === null ? "ended" : "active",
      a.next?.at ?? null,
      a.next?.key ?? null,
      a.missedCount,
      a.lastMisfireAt,
      a.catchUpFired,
      now,
      map,
    );
    if (a.next === null) continue;
    const group = {
      tenant: g[G.tenant],
      target: g[G.target],
      dueAt: a.next.at,
      bucket: ctx.bucketOf(a.next.at),
    };
    const expire = occurrenceExpireAfterMs(
      g[G.misfire],
      g[G.expireAfterMs],
      g[G.misfireToleranceMs],
    );
    const r = ctx.s.occurrencesInsert.run(
      group.dueAt,
      group.bucket,
      expire,
      now,
      now,
      a.next.key,
      map,
    );
    written.inserted(group, Number(r.lastInsertRowid) - r.changes, r.changes);
  }
  return undecoded;
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
  /** 1 when the template decodes (series-statements.ts DECODES). */
  decodes: number | null,
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
  decodes: 16,
  ids: 17,
});

/**
 * A series standing for its group in advanceStep: the group's decision fields, and the
 * counters that only pass through it at zero, so what it returns for them is what the claim
 * adds (missedCount: the missed to add; lastMisfireAt: now, or null for "unchanged";
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

/**
 * The JSON object a group's statements take (series-statements.ts NEXT_JOB_ID): each series
 * id to its next occurrence's job id, or [job id, shard] on a file of several shards, or to
 * null when the series ends. Built as text (each stored id quoted by JSON.stringify; the new
 * ids are ULIDs made here).
 */
function nextIds(ctx: SqliteContext, ids: readonly string[], newId: (() => string) | null): string {
  const shards = ctx.shardCount;
  let text = "{";
  for (let i = 0; i < ids.length; i++) {
    text += `${i === 0 ? "" : ","}${JSON.stringify(ids[i]!)}:`;
    if (newId === null) {
      text += "null";
    } else {
      const id = newId();
      text += shards === 1 ? `"${id}"` : `["${id}",${shardOf(id, shards)}]`;
    }
  }
  return `${text}}`;
}
