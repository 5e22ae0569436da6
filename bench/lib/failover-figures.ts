/**
 * The failover run's figures from what it recorded: the acknowledged creates, every delivery
 * the receiver saw (job id, attempt, time), the standby's view at the kill, and the kill and
 * promotion times. Also the checks the run asserts. Times are epoch ms of this machine's
 * clock, which the nodes, the receiver and the writers share.
 */
import { shardOf } from "../../src/core/ids.js";
import { firstArrivals, type Arrival } from "../chaos-common.js";
import type { StandbyView } from "./failover-db.js";
import { ascending, percentile } from "./stats.js";

/** A job whose create was acknowledged: by the library before the run, or 201 over HTTP. */
export interface Acked {
  readonly id: string;
  readonly dueAt: number;
  readonly ackedAt: number;
  readonly via: "library" | "http";
}

export interface FailoverRecord {
  readonly acked: readonly Acked[];
  readonly httpFailed: number;
  readonly arrivals: readonly Arrival[];
  readonly killedAt: number;
  readonly promotedAt: number;
  readonly atKill: StandbyView;
  /** The schema's shard count (jobs are spread over shards by id). */
  readonly shardCount: number;
}

export interface FailoverFigures {
  readonly acked: { library: number; http: number; httpFailed: number };
  readonly delivered: number;
  /** Acknowledged, never delivered. */
  readonly lost: readonly Acked[];
  /** Acknowledged before the promotion and in none of the standby's tables at the kill. */
  readonly missingOnStandby: readonly Acked[];
  /** Deliveries that arrived before their job's due time. */
  readonly early: number;
  /** Jobs delivered more than once, by what the standby held for them at the kill. */
  readonly duplicates: {
    total: number;
    /** Claimed on the standby: in flight when the primary died. */
    claimedAtKill: number;
    /**
     * Pending on the standby, and delivered before the promotion (claimed from the dead
     * primary: no claim could be made between) or every time with the same attempt number
     * (claimed again from the same count: the first claim was not on the standby): the claim
     * died with the primary while a node held the job. Only asynchronous replication loses
     * a claim.
     */
    claimLost: number;
    /** Anything else: a duplicate of a job that was not in flight. */
    other: number;
    /** The repeat carried a higher attempt number than the first delivery. */
    laterAttempt: number;
  };
  /** Jobs claimed on the standby at the kill (in flight then). */
  readonly inFlightAtKill: number;
  /** Deliveries of jobs whose create was never acknowledged (written, answer lost). */
  readonly unacknowledgedDelivered: number;
  /** From the promotion to the first delivery the receiver saw after it. */
  readonly resumeMs: number;
  /**
   * From the promotion until every shard (of those with jobs due after it) had a delivery
   * again: when the last node was firing again, since nodes own shards.
   */
  readonly allShardsResumedMs: number;
  /** Acknowledged jobs due between the kill and the promotion, and when the last arrived. */
  readonly outage: { due: number; allDeliveredAfterPromotionMs: number };
  readonly lateness: { p50: number; p99: number; max: number; steadyP99: number };
}

/** Lateness is counted as steady again from this long after the promotion. */
export const STEADY_AFTER_MS = 10_000;

export function failoverFigures(r: FailoverRecord): FailoverFigures {
  const first = firstArrivals(r.arrivals);
  const ackedIds = new Set(r.acked.map((a) => a.id));
  const lost = r.acked.filter((a) => !first.has(a.id));
  const { claimed, live, history } = r.atKill;
  // Acknowledged before the promotion: committed on the dead primary (it was the only writable host).
  const missingOnStandby = r.acked.filter(
    (a) => a.ackedAt < r.promotedAt && !claimed.has(a.id) && !live.has(a.id) && !history.has(a.id),
  );
  const late = (a: Acked): number => first.get(a.id)!.at - a.dueAt;
  const delivered = r.acked.filter((a) => first.has(a.id));
  const lateness = ascending(delivered.map(late));
  const steady = ascending(
    delivered.filter((a) => a.dueAt >= r.promotedAt + STEADY_AFTER_MS).map(late),
  );
  const outageDue = r.acked.filter((a) => a.dueAt >= r.killedAt && a.dueAt < r.promotedAt);
  const outageLast = Math.max(
    ...outageDue.flatMap((a) => {
      const f = first.get(a.id);
      return f ? [f.at] : [];
    }),
  );
  const resumed = r.arrivals.filter((a) => a.at > r.promotedAt).map((a) => a.at);
  const shardResumed = new Map<number, number>();
  for (const a of r.arrivals) {
    if (a.at <= r.promotedAt) continue;
    const shard = shardOf(a.id, r.shardCount);
    shardResumed.set(shard, Math.min(shardResumed.get(shard) ?? Infinity, a.at));
  }
  return {
    acked: {
      library: r.acked.filter((a) => a.via === "library").length,
      http: r.acked.filter((a) => a.via === "http").length,
      httpFailed: r.httpFailed,
    },
    delivered: delivered.length,
    lost,
    missingOnStandby,
    early: r.arrivals.filter((a) => a.at < a.dueAt).length,
    duplicates: duplicatesOf(r),
    inFlightAtKill: claimed.size,
    unacknowledgedDelivered: [...first.keys()].filter((id) => !ackedIds.has(id)).length,
    resumeMs: resumed.length === 0 ? NaN : Math.min(...resumed) - r.promotedAt,
    allShardsResumedMs: Math.max(...shardResumed.values()) - r.promotedAt,
    outage: { due: outageDue.length, allDeliveredAfterPromotionMs: outageLast - r.promotedAt },
    lateness: {
      p50: percentile(lateness, 50),
      p99: percentile(lateness, 99),
      max: lateness[lateness.length - 1] ?? NaN,
      steadyP99: percentile(steady, 99),
    },
  };
}

function duplicatesOf(r: FailoverRecord): FailoverFigures["duplicates"] {
  const byId = new Map<string, Arrival[]>();
  for (const a of r.arrivals) byId.set(a.id, [...(byId.get(a.id) ?? []), a]);
  const out = { total: 0, claimedAtKill: 0, claimLost: 0, other: 0, laterAttempt: 0 };
  for (const [id, all] of byId) {
    if (all.length < 2) continue;
    out.total++;
    const [firstOne, ...repeats] = all;
    if (repeats.some((a) => a.attempt > firstOne!.attempt)) out.laterAttempt++;
    if (r.atKill.claimed.has(id)) out.claimedAtKill++;
    else if (
      r.atKill.live.has(id) &&
      (firstOne!.at < r.promotedAt || repeats.every((a) => a.attempt === firstOne!.attempt))
    )
      out.claimLost++;
    else out.other++;
  }
  return out;
}

/** One check the run asserts: what it demands and whether it held. */
export interface Check {
  readonly what: string;
  readonly held: boolean;
}

/** The goal for deliveries after a promotion, ms. */
export const RESUME_GOAL_MS = 10_000;

/**
 * What must hold. Synchronous: nothing acknowledged lost. Both: nothing early, duplicates
 * only of jobs in flight at the kill, deliveries again within the goal after the promotion,
 * and every lost job one the standby never had (acknowledged by the primary alone).
 */
export function failoverChecks(f: FailoverFigures, synchronous: boolean): Check[] {
  const checks: Check[] = [
    { what: "no delivery before its due time", held: f.early === 0 },
    { what: "duplicates only of jobs in flight at the kill", held: f.duplicates.other === 0 },
    ...(synchronous
      ? [{ what: "no claim lost with the primary", held: f.duplicates.claimLost === 0 }]
      : []),
    {
      what: `every shard delivering again within ${RESUME_GOAL_MS / 1000} s of the promotion`,
      held: f.allShardsResumedMs < RESUME_GOAL_MS,
    },
    {
      what: "every lost job was missing on the standby at the kill",
      held: f.lost.every((l) => f.missingOnStandby.some((m) => m.id === l.id)),
    },
  ];
  if (synchronous) checks.unshift({ what: "no acknowledged job lost", held: f.lost.length === 0 });
  return checks;
}
