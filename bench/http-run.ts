/**
 * The HTTP service benchmarks: `tsx bench/http-run.ts [http-create] [http-webhook]
 * [http-fairness] [http-fairness-held] [http-auth-flood]`;
 * BENCH_SCALE=tiny for the CI smoke run. Tables to stdout, progress to stderr; exits 0
 * unless a benchmark fails to run (a MISS is reported, not an exit code).
 */
import { httpAuthFlood } from "./http-auth-flood.js";
import { httpCreate } from "./http-create.js";
import { httpFairness, httpFairnessHeld } from "./http-fairness.js";
import { httpWebhook } from "./http-webhook.js";
import { httpSizes } from "./http-common.js";
import { runNamed, type BenchResult } from "./lib/report.js";
import { machineFacts } from "./lib/machine.js";

const BENCHMARKS: Readonly<Record<string, () => Promise<BenchResult>>> = {
  "http-create": () => httpCreate(),
  "http-webhook": () => httpWebhook(),
  "http-fairness": () => httpFairness(),
  "http-fairness-held": () => httpFairnessHeld(),
  "http-auth-flood": () => httpAuthFlood(),
};

async function main(): Promise<number> {
  const names = process.argv.slice(2).filter((a) => a !== "--");
  for (const n of names) {
    if (!(n in BENCHMARKS)) {
      process.stderr.write(
        `unknown benchmark ${n}; known: ${Object.keys(BENCHMARKS).join(", ")}\n`,
      );
      return 2;
    }
  }
  process.stdout.write(`## duetime HTTP service benchmarks (scale ${httpSizes().scale})\n\n`);
  process.stdout.write(`${machineFacts()}\n\n`);
  let failed = 0;
  const summary: string[] = [];
  for (const name of names.length > 0 ? names : Object.keys(BENCHMARKS)) {
    if (!(await runNamed(name, () => BENCHMARKS[name]!(), summary))) failed++;
  }
  process.stdout.write(`### Summary\n\n${summary.join("\n")}\n`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
