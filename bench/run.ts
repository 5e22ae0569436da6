/**
 * The SQLite benchmark suite: `npm run bench` runs every benchmark in sequence at the full
 * sizes of issue 2; `npm run bench -- precision poll-cost` runs the named ones;
 * `npm run bench:tiny` (BENCH_SCALE=tiny) is the CI smoke run. Tables go to stdout,
 * progress to stderr. A MISS is reported, never an exit code: the suite exits 0 unless a
 * benchmark fails to run. Cached backlogs are deleted at the end unless BENCH_KEEP_DATA=1.
 * On a shared machine, BENCH_QUIET_LOAD=1.5 waits before each benchmark until the 1-minute
 * load average is below 1.5 (at most BENCH_QUIET_WAIT_S seconds, default 600).
 */
import { bulkCancel } from "./bulk-cancel.js";
import { catchUp } from "./catch-up.js";
import { changeFeed } from "./change-feed.js";
import { removeAllData } from "./lib/data.js";
import { runNamed, type BenchResult } from "./lib/report.js";
import { load1, machineFacts, waitForQuiet } from "./lib/machine.js";
import { sizesFromEnv, type Sizes } from "./lib/scale.js";
import { dispatchThroughput } from "./dispatch-throughput.js";
import { memoryIdle } from "./memory-idle.js";
import { pollCost } from "./poll-cost.js";
import { pausedIdle } from "./paused-idle.js";
import { precision } from "./precision.js";
import { scheduleThroughput } from "./schedule-throughput.js";
import { seriesBench } from "./series.js";
import { tagCost } from "./tag-cost.js";
import { tracingOverhead } from "./tracing-overhead.js";

const BENCHMARKS: Readonly<Record<string, (s: Sizes) => Promise<BenchResult>>> = {
  "poll-cost": pollCost,
  "schedule-throughput": scheduleThroughput,
  precision,
  "dispatch-throughput": dispatchThroughput,
  "catch-up": catchUp,
  "memory-idle": memoryIdle,
  "tracing-overhead": tracingOverhead,
  "change-feed": changeFeed,
  series: seriesBench,
  "tag-cost": tagCost,
  "bulk-cancel": bulkCancel,
  "paused-idle": pausedIdle,
};

async function main(): Promise<number> {
  const sizes = sizesFromEnv();
  const names = process.argv.slice(2).filter((a) => a !== "--");
  for (const n of names) {
    if (!(n in BENCHMARKS)) {
      process.stderr.write(
        `unknown benchmark ${n}; known: ${Object.keys(BENCHMARKS).join(", ")}\n`,
      );
      return 2;
    }
  }
  const selected = names.length > 0 ? names : Object.keys(BENCHMARKS);
  process.stdout.write(`## duetime SQLite benchmarks (scale ${sizes.scale})\n\n`);
  process.stdout.write(`${machineFacts()}\n\n`);
  const started = performance.now();
  let failed = 0;
  const summary: string[] = [];
  try {
    for (const name of selected) {
      await waitForQuiet();
      let loadBefore = "";
      const ok = await runNamed(
        name,
        () => {
          loadBefore = load1();
          return BENCHMARKS[name]!(sizes);
        },
        summary,
        () => `- load average (1 min) ${loadBefore} before, ${load1()} after\n`,
      );
      if (!ok) failed++;
    }
  } finally {
    if (process.env.BENCH_KEEP_DATA !== "1") removeAllData();
  }
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`### Summary (${secs} s)\n\n${summary.join("\n")}\n`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
