/**
 * The PostgreSQL benchmark suite: `npx tsx bench/postgres-run.ts [names...]` runs every
 * benchmark (or the named ones) at the sizes; BENCH_SCALE=tiny is the CI smoke run.
 * Uses the server named by PG_URL (127.0.0.1 only), else starts a throwaway one with the
 * machine's PostgreSQL binaries. Tables go to stdout, progress to stderr; a MISS is
 * reported, never an exit code.
 */
import { cpus, totalmem } from "node:os";
import { runNamed, type BenchResult } from "./lib/report.js";
import { benchServer, pgSizes, stopBenchServer, type PgSizes } from "./postgres-common.js";
import { pgBulkErase } from "./postgres-bulk-erase.js";
import { pgBulkInsert } from "./postgres-bulk-insert.js";
import { pgChurn } from "./postgres-churn.js";
import { pgClaimCost } from "./postgres-claim-cost.js";
import { pgClaimTx } from "./postgres-claim-tx.js";
import { pgIdle } from "./postgres-idle.js";
import { pgPauseCost } from "./postgres-pause-cost.js";
import { pgPausedIdle } from "./postgres-paused-idle.js";
import { pgPrecision } from "./postgres-precision.js";
import { pgDispatch } from "./postgres-dispatch.js";
import pg from "pg";

const BENCHMARKS: Readonly<Record<string, (s: PgSizes) => Promise<BenchResult>>> = {
  "bulk-insert": pgBulkInsert,
  "bulk-erase": pgBulkErase,
  "claim-cost": pgClaimCost,
  "claim-tx": pgClaimTx,
  churn: pgChurn,
  precision: pgPrecision,
  dispatch: pgDispatch,
  idle: pgIdle,
  "pause-cost": pgPauseCost,
  "paused-idle": pgPausedIdle,
};

async function main(): Promise<number> {
  const sizes = pgSizes();
  const names = process.argv.slice(2).filter((a) => a !== "--");
  for (const n of names) {
    if (!(n in BENCHMARKS)) {
      process.stderr.write(
        `unknown benchmark ${n}; known: ${Object.keys(BENCHMARKS).join(", ")}\n`,
      );
      return 2;
    }
  }
  const server = await benchServer();
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const version = (await client.query<{ server_version: string }>("SHOW server_version")).rows[0]!
    .server_version;
  await client.end();
  process.stdout.write(`## duetime PostgreSQL benchmarks (scale ${sizes.scale})\n\n`);
  process.stdout.write(
    `date ${new Date().toISOString()}, ${cpus().length} x ${cpus()[0]?.model.trim() ?? "cpu"}, ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB RAM, node ${process.version}, PostgreSQL ${version}\n\n`,
  );
  let failed = 0;
  const summary: string[] = [];
  try {
    for (const name of names.length > 0 ? names : Object.keys(BENCHMARKS)) {
      if (!(await runNamed(name, () => BENCHMARKS[name]!(sizes), summary))) failed++;
    }
  } finally {
    await stopBenchServer();
  }
  process.stdout.write(`### Summary\n\n${summary.join("\n")}\n`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
