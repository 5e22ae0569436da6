import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { note } from "./progress.js";
import { median } from "./stats.js";

/**
 * The poll cost of a store of series, measured as bench/poll-cost.ts measures the store's
 * own path: the whole jobsClaimDue of a small due set (here series occurrences, so the claim
 * includes the series step: each series advanced and its next occurrence written), rolled
 * back after each poll so every poll sees the same due set. The bucket about to come due is
 * staged as the watcher would (stageAheadMs 60 s), so the hot table holds its share of the
 * stored series beside the due set.
 */
const LIMIT = 500;
const HORIZON_MS = 1000;
const STAGE_AHEAD_MS = 60_000;

export interface PollProbe {
  readonly series: number;
  readonly hotRows: number;
  /** One poll; resolves to the ms the jobsClaimDue call took (the rollback is not timed). */
  readonly poll: () => Promise<number>;
  readonly close: () => Promise<void>;
}

export async function pollProbe(
  path: string,
  opts: { series: number; at: number; due: number },
): Promise<PollProbe> {
  const store = new SqliteStore({ path });
  const db = store.connection;
  await store.bucketsStage({ until: opts.at + STAGE_AHEAD_MS, maxRows: Number.MAX_SAFE_INTEGER });
  const hotRows = db.prepare(`SELECT count(*) FROM hot`).pluck().get() as number;
  const params = {
    now: opts.at,
    dueBefore: opts.at + HORIZON_MS,
    limit: LIMIT,
    leaseMs: 60_000,
    owner: "bench",
  };
  const poll = async (): Promise<number> => {
    db.exec("BEGIN IMMEDIATE");
    try {
      const started = performance.now();
      const jobs = await store.jobsClaimDue(params);
      const ms = performance.now() - started;
      const occurrences = jobs.filter((j) => j.scheduleId !== null).length;
      if (jobs.length !== opts.due || occurrences !== opts.due) {
        throw new Error(`series poll: claimed ${jobs.length} (${occurrences} occurrences)`);
      }
      return ms;
    } finally {
      db.exec("ROLLBACK");
    }
  };
  await poll();
  return { series: opts.series, hotRows, poll, close: () => store.close() };
}

/**
 * Times the probes round-robin (each round gives every probe the same time slice, starting
 * with a different one), so load from other processes falls on all sizes alike; each figure
 * is the median round's mean ms per poll.
 */
export async function pollInRounds(
  probes: readonly PollProbe[],
  rounds: number,
  sliceMs = 40,
): Promise<{ ms: number[]; polls: number[] }> {
  const samples = probes.map(() => [] as number[]);
  const polls = probes.map(() => 0);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < probes.length; k++) {
      const i = (k + r) % probes.length;
      let ms = 0;
      let n = 0;
      const started = performance.now();
      while (n < 5 || performance.now() - started < sliceMs) {
        ms += await probes[i]!.poll();
        n++;
      }
      samples[i]!.push(ms / n);
      polls[i]! += n;
    }
  }
  note(`series: poll cost timed in ${rounds} rounds`);
  return { ms: samples.map(median), polls };
}
