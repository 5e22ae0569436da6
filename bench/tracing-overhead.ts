import type { Job } from "../src/core/job.js";
import {
  endAttemptSpan,
  inScheduleSpan,
  setTracingDisabled,
  startAttemptSpan,
  withTraceContext,
} from "../src/engine/tracing.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { scratchCopy, scratchPath } from "./lib/data.js";
import { drainWithScheduler } from "./lib/drain.js";
import { insertJobs, newJobs } from "./lib/jobs.js";
import { note } from "./lib/progress.js";
import { fmt, rate, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";

/**
 * What the OpenTelemetry instrumentation costs when the application registers no SDK (only
 * `@opentelemetry/api` is loaded): dispatch throughput of the same due jobs fired by a
 * started Scheduler into a no-op handler, with the instrumentation as shipped against the
 * same build with it switched off (setTracingDisabled, the same-run baseline). Rounds of one
 * run per mode alternate ABBA over copies of one prepared file; the figures are each mode's
 * median of sustained throughput (10% to 90% fired) and the median of the rounds' ratios.
 */
export async function tracingOverhead(sizes: Sizes): Promise<BenchResult> {
  const n = sizes.dispatchJobs;
  const prepared = scratchPath("tracing-prepared");
  try {
    const prep = new SqliteStore({ path: prepared.path });
    const now = Date.now();
    note(`tracing: inserting ${count(n)} due jobs`);
    await insertJobs(
      prep,
      newJobs(prep, n, (i) => now - 1 - Math.floor((i * 600_000) / n)),
    );
    prep.connection.pragma("wal_checkpoint(TRUNCATE)");
    await prep.close();

    const runs: Record<"off" | "api", number[]> = { off: [], api: [] };
    const rounds = sizes.scale === "tiny" ? 3 : 5;
    for (let r = 0; r < rounds; r++) {
      // ABBA: each round runs both modes, in alternating order, so drift in the machine's
      // load falls on both alike; a round's ratio compares two runs next to each other.
      for (const mode of r % 2 === 0 ? (["off", "api"] as const) : (["api", "off"] as const)) {
        const copy = scratchCopy(prepared.path, `tracing-${mode}`);
        setTracingDisabled(mode === "off");
        try {
          const run = await drainWithScheduler(copy.path, n, `tracing ${mode}: fired`);
          if (run.succeeded !== n) throw new Error(`${mode}: ${run.succeeded} of ${n} succeeded`);
          runs[mode].push(run.sustained);
        } finally {
          setTracingDisabled(false);
          copy.remove();
        }
      }
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const api = median(runs.api);
    const off = median(runs.off);
    const paired = median(runs.api.map((a, i) => a / runs.off[i]!));
    const ns = await instrumentationNs();
    // Share of a baseline job's time: one attempt span per job, one schedule span per call.
    const share = (nsPerJob: number): string => `${fmt((nsPerJob / 1e9) * off * 100)}%`;
    return {
      name: "tracing-overhead",
      title: `Tracing overhead without an SDK: ${count(n)} due jobs, no-op handler, ${rounds} rounds (ABBA)`,
      goals: [
        {
          metric: "dispatch throughput, @opentelemetry/api only (median)",
          value: rate(api),
          goal: ">= 0.98x of the baseline",
          baseline: `${rate(off)} (instrumentation off)`,
          ratio: ratio(api, off),
          pass: api >= 0.98 * off,
        },
        {
          metric: "the same, median of each round's ratio (runs side by side)",
          value: `${fmt(paired, 3)}x`,
          goal: ">= 0.98x",
          baseline: "the round's run with instrumentation off",
          ratio: `${fmt(paired, 3)}x`,
          pass: paired >= 0.98,
        },
      ],
      details: [
        {
          title:
            "The instrumentation's own cost without an SDK (7 alternating rounds of 200k calls, median)",
          headers: ["calls", "ns per call", "share of a baseline job's time"],
          rows: [
            ["attempt span start and end (every fired job)", fmt(ns.attempt), share(ns.attempt)],
            [
              "schedule span + trace context (every schedule call; a batch shares one)",
              fmt(ns.schedule),
              `${share(ns.schedule)} for schedule(), ${share(ns.schedule / 10_000)} in batches of 10k`,
            ],
          ],
        },
        {
          title: "Every run, sustained jobs/s",
          headers: ["mode", ...runs.off.map((_, i) => `round ${i + 1}`)],
          rows: [
            ["instrumentation off", ...runs.off.map((r) => fmt(r))],
            ["@opentelemetry/api, no SDK", ...runs.api.map((r) => fmt(r))],
          ],
        },
      ],
      notes: [
        "Without an SDK the API's tracer hands out non-recording spans: the engine builds no attributes, stores no trace context and runs the handler without a context switch.",
      ],
    };
  } finally {
    prepared.remove();
  }
}

/**
 * What the instrumentation's calls cost with no SDK registered, timed in a loop: the
 * attempt span's start and end (once per fired job), and a schedule span around a call with
 * its trace-context step (once per schedule or scheduleMany call, so shared by a batch's
 * jobs). Each is timed against the same loop without the calls, in alternating rounds; the
 * figure is the median round's difference. Noise in the end-to-end runs on a busy machine is
 * far larger than this.
 */
async function instrumentationNs(): Promise<{ attempt: number; schedule: number }> {
  const job = {
    id: "01JD3V6Q5X4W8N2M7K9P0R1S2T",
    tenant: "default",
    target: "noop",
    targetOptions: null,
    traceContext: null,
    attempts: 1,
    maxAttempts: 3,
  } as unknown as Job;
  const jobs = [job] as never[];
  const calls = 200_000;
  const insert = async (): Promise<never[]> => jobs;
  const time = async (fn: () => Promise<unknown> | unknown): Promise<number> => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await fn();
    return Number(process.hrtime.bigint() - t0) / calls;
  };
  const attempt = (): void => endAttemptSpan(startAttemptSpan(job, 0), "succeeded", null);
  const schedule = () => inScheduleSpan(1, async () => withTraceContext(await insert()));
  const bare = () => (async () => withTraceContext(await insert()))();
  const d = { attempt: [] as number[], schedule: [] as number[] };
  for (let round = 0; round < 7; round++) {
    setTracingDisabled(true);
    const offAttempt = await time(attempt);
    const offSchedule = await time(bare);
    setTracingDisabled(false);
    d.attempt.push((await time(attempt)) - offAttempt);
    d.schedule.push((await time(schedule)) - offSchedule);
  }
  const median = (xs: number[]): number => Math.max(0, [...xs].sort((x, y) => x - y)[3]!);
  return { attempt: median(d.attempt), schedule: median(d.schedule) };
}
