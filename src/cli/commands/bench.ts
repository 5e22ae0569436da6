import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { EXIT, usageError } from "../errors.js";
import {
  action,
  openScheduler,
  out,
  outJson,
  parseIntFlag,
  type GlobalOptions,
} from "../context.js";
import { table } from "../format.js";
import { runSelfBench, type Rate, type SelfBenchResult } from "../self-bench.js";

interface BenchOptions {
  jobs: string;
  window: string;
  dir?: string;
  json?: boolean;
}

/** `duetime bench`: how fast duetime schedules and fires on this machine, on a scratch file. */
export function registerBench(program: Command): void {
  program
    .command("bench")
    .description(
      "measure schedule and firing throughput and firing precision on this machine, on a scratch SQLite file (deleted afterwards)",
    )
    .option("--jobs <n>", "jobs of the bulk phase (the other phases scale from it)", "100000")
    .option("--window <ms>", "window the precision phase's jobs are due across", "5000")
    .option(
      "--dir <path>",
      "directory of the scratch file (the disk to measure; default: the system's temp directory)",
    )
    .option("--json", "print only the result, as JSON")
    .addHelpText(
      "after",
      `
Phases, on one scratch file:
  bulk           --jobs jobs through scheduleMany (10,000 per transaction), due 1-30 days ahead
  one at a time  a tenth as many through schedule (a transaction each)
  dispatch       half as many already due, fired to a no-op handler and settled
  precision      a tenth (at most 20,000) due across --window from 1 s ahead: lateness at the handler
The full benchmark suite (10M-job backlogs, baselines) is \`npm run bench\` in a clone of the repository.
Exit code 0, or 1 when a precision job fired early or never fired.`,
    )
    .action(
      action(async (o: BenchOptions, cmd: Command) => {
        const g = cmd.optsWithGlobals<GlobalOptions>();
        if (g.db !== undefined) {
          throw usageError(
            "--db",
            "no --db: bench runs on a scratch file of its own (see --dir)",
            g.db,
          );
        }
        const jobs = parseIntFlag(o.jobs, "--jobs", 1000, 10_000_000)!;
        const windowMs = parseIntFlag(o.window, "--window", 100, 600_000)!;
        const say = o.json ? (_: string): void => undefined : out;
        const dir = mkdtempSync(join(o.dir ?? tmpdir(), "duetime-bench-"));
        try {
          const db = join(dir, "bench.db");
          say(`duetime bench on ${db}`);
          const scheduler = await openScheduler(cmd, {}, db);
          let result: SelfBenchResult;
          try {
            result = await runSelfBench(scheduler, { jobs, windowMs, say });
          } finally {
            await scheduler.close();
          }
          if (o.json) outJson(result);
          else printResult(result);
          const p = result.precision;
          return p.early === 0 && p.lost === 0 ? EXIT.ok : EXIT.failure;
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
    );
}

function printResult(r: SelfBenchResult): void {
  const rate = (x: Rate): string => `${x.perSecond.toLocaleString("en-US")}/s`;
  const n = (x: number): string => x.toLocaleString("en-US");
  const p = r.precision;
  const rows: string[][] = [
    ["bulk schedule (scheduleMany)", n(r.bulk.jobs), rate(r.bulk)],
    ["one at a time (schedule)", n(r.oneAtATime.jobs), rate(r.oneAtATime)],
    ["dispatch (due, no-op handler)", n(r.dispatch.jobs), rate(r.dispatch)],
    ["precision: lateness p50", n(p.jobs), `${p.latenessMs.p50} ms`],
    ["precision: lateness p99", n(p.jobs), `${p.latenessMs.p99} ms`],
    ["precision: lateness max", n(p.jobs), `${p.latenessMs.max} ms`],
    ["precision: early / lost / duplicated", n(p.jobs), `${p.early} / ${p.lost} / ${p.duplicated}`],
  ];
  out("");
  out(table(["PHASE", "JOBS", "RESULT"], rows, ["l", "r", "r"]));
  out(
    `backlog of ${n(r.backlog)} future jobs during the firing phases; ${(r.wallMs / 1000).toFixed(1)} s in all`,
  );
  out(
    p.early === 0 && p.lost === 0
      ? "every precision job fired, none early, none lost."
      : "PROBLEM: precision jobs fired early or were lost.",
  );
}
