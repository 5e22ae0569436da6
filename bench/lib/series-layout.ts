import type { Scheduler } from "../../src/api/scheduler.js";
import { DAY, HOUR } from "./data.js";
import { Progress } from "./progress.js";

/**
 * The series the series benchmark stores, made as a user makes them: one scheduleRecurring
 * call each (a daily 6-field cron in UTC, a no-op target), so every figure includes the
 * validation, the rule compile and the one write transaction a real caller pays.
 */
export const SECOND = 1000;

/** A daily cron firing at `at`'s second of the day, UTC ("s m h * * *"). */
export function dailyCronAt(at: number): string {
  const secOfDay = Math.floor((((at % DAY) + DAY) % DAY) / SECOND);
  const h = Math.floor(secOfDay / 3600);
  const m = Math.floor((secOfDay % 3600) / 60);
  return `${secOfDay % 60} ${m} ${h} * * *`;
}

/**
 * The instants a group of `n` series fires at, staggered evenly across `spanMs` from `from`,
 * rounded down to the second (cron's resolution): series i fires daily at at(i).
 */
export function staggered(n: number, from: number, spanMs: number): (i: number) => number {
  return (i) => Math.floor((from + Math.floor((i * spanMs) / n)) / SECOND) * SECOND;
}

export interface Created {
  readonly ids: string[];
  /** Series per second over the whole group (each one scheduleRecurring, awaited in turn). */
  readonly rate: number;
}

/**
 * Creates `n` daily series, series i at `at(i)` with payload `{ n: firstN + i }` (the fired
 * log's index), one scheduleRecurring each, awaited in turn.
 */
export async function createDailySeries(
  scheduler: Scheduler,
  n: number,
  at: (i: number) => number,
  opts: { firstN: number; label: string },
): Promise<Created> {
  const ids: string[] = new Array<string>(n);
  const p = new Progress(opts.label, n);
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const { schedule } = await scheduler.scheduleRecurring({
      cron: dailyCronAt(at(i)),
      timeZone: "UTC",
      target: "noop",
      payload: { n: opts.firstN + i },
    });
    ids[i] = schedule.id;
    if (i % 1000 === 0) p.update(i);
  }
  const rate = n / ((performance.now() - started) / 1000);
  p.done(`${Math.round(rate).toLocaleString("en-US")}/s`);
  return { ids, rate };
}

/**
 * Where the stored series fire: from the first whole hour at least two hours away (so none
 * is due while the benchmark runs; its windows come sooner), spread over the next 20 hours (so the last still come after
 * now and its two hours, a day on).
 * `dueSetAt` is the instant the poll-cost probe claims at: 30 s before that hour, as the
 * SQLite poll-cost benchmark places it, with its small due set just before.
 */
export function storedLayout(now: number): { from: number; spanMs: number; pollAt: number } {
  const from = Math.ceil((now + 2 * HOUR) / HOUR) * HOUR;
  return { from, spanMs: 20 * HOUR, pollAt: from - 30 * SECOND };
}
