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
 * same build with it switched off (setTracingDisabled, the same-run baseline). Runs
 * alternate ABBA over copies of one prepared file; the figure is each mode's median of
 * sustained throughput (10% to 90% fired).
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
    for (const mode of ["off", "api", "api", "off", "off", "api"] as const) {
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
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[1]!;
    const api = median(runs.api);
    const off = median(runs.off);
    const perJobNs = await instrumentationNsPerJob();
    const share = (perJobNs / 1e9) * off;
    return {
      name: "tracing-overhead",
      title: `Tracing overhead without an SDK: ${count(n)} due jobs, no-op handler, 3 runs each (ABBA)`,
      goals: [
        {
          metric: "dispatch throughput, @opentelemetry/api only (median)",
          value: rate(api),
          goal: ">= 0.98x of the baseline",
          baseline: `${rate(off)} (instrumentation off)`,
          ratio: ratio(api, off),
          pass: api >= 0.98 * off,
        },
      ],
      details: [
        {
          title: "The instrumentation's own cost per job without an SDK (1M calls, same run)",
          headers: ["calls per job", "ns per job", "share of a baseline job's time"],
          rows: [
            [
              "schedule span + trace context + attempt span start/end",
              fmt(perJobNs),
              `${fmt(share * 100)}%`,
            ],
          ],
        },
        {
          title: "Every run, sustained jobs/s",
          headers: ["mode", "run 1", "run 2", "run 3"],
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
 * What the instrumentation's calls cost per job with no SDK registered, timed in a loop:
 * a schedule span around a one-job insert, the trace context step, and an attempt span's
 * start and end. Noise in the end-to-end runs on a busy machine is far larger than this.
 */
async function instrumentationNsPerJob(): Promise<number> {
  const job = {
    id: "01JD3V6Q5X4W8N2M7K9P0R1S2T",
    tenant: "default",
    target: "noop",
    targetOptions: null,
    attempts: 1,
    maxAttempts: 3,
  } as unknown as Job;
  const jobs = [job] as never[];
  const calls = 1_000_000;
  const round = async (): Promise<void> => {
    await inScheduleSpan(1, async () => withTraceContext(jobs));
    endAttemptSpan(startAttemptSpan(job, 0), "succeeded", null);
  };
  for (let i = 0; i < 10_000; i++) await round();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await round();
  const total = Number(process.hrtime.bigint() - t0);
  // The loop's own await, without instrumentation, as the baseline to subtract.
  const noop = async (): Promise<void> => undefined;
  const b0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await noop();
  const loop = Number(process.hrtime.bigint() - b0);
  return Math.max(0, total - loop) / calls;
}
