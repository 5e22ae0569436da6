/**
 * The HTTP service benchmarks: `tsx bench/http-run.ts [http-create] [http-webhook]`;
 * BENCH_SCALE=tiny for the CI smoke run. Tables to stdout, progress to stderr; exits 0
 * unless a benchmark fails to run (a MISS is reported, not an exit code).
 */
import { httpCreate } from "./http-create.js";
import { httpWebhook } from "./http-webhook.js";
import { httpSizes } from "./http-common.js";
import { renderResult, type BenchResult } from "./lib/report.js";
import { machineFacts } from "./lib/machine.js";

const BENCHMARKS: Readonly<Record<string, () => Promise<BenchResult>>> = {
  "http-create": () => httpCreate(),
  "http-webhook": () => httpWebhook(),
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
    process.stderr.write(`> ${name}\n`);
    const t = performance.now();
    try {
      const result = await BENCHMARKS[name]!();
      process.stdout.write(`${renderResult(result)}\n`);
      for (const g of result.goals) {
        if (g.pass !== null) summary.push(`${g.pass ? "PASS" : "MISS"}  ${name}: ${g.metric}`);
      }
    } catch (err) {
      failed++;
      process.stderr.write(`${name} failed: ${(err as Error).stack ?? String(err)}\n`);
      summary.push(`FAIL  ${name}: ${(err as Error).message}`);
    }
    process.stderr.write(`< ${name} ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  }
  process.stdout.write(`### Summary\n\n${summary.join("\n")}\n`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
