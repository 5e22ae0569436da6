import { mkdtempSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { EXIT, usageError } from "../errors.js";
import {
  action,
  openScheduler,
  out,
  outJson,
  parseIntFlag,
  resolveDb,
  type GlobalOptions,
} from "../context.js";
import { table } from "../format.js";
import { parseDbLocation } from "../../core/db-location.js";
import { runSelfBench, selfBenchPassed, type Rate, type SelfBenchResult } from "../self-bench.js";

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
      "directory of the scratch file: the disk to measure (default: that of $DUETIME_DB, else the current directory)",
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
Exit code 0, or 1 when a job fired early, twice or never, or an outcome is missing from the store.`,
    )
    .action(
      action(async (o: BenchOptions, cmd: Command) => {
        const g = cmd.optsWithGlobals<GlobalOptions>();
        if (g.db !== undefined) {
          throw usageError(
            "--db",
            "no --db (bench makes a scratch file of its own; see --dir)",
            g.db,
          );
        }
        const jobs = parseIntFlag(o.jobs, "--jobs", 1000, 10_000_000)!;
        const windowMs = parseIntFlag(o.window, "--window", 100, 600_000)!;
        const say = o.json ? (_: string): void => undefined : out;
        const dir = scratchDir(o.dir ?? defaultParent(resolveDb(g)), o.dir !== undefined);
        // Ctrl-C must not leave a scratch file of hundreds of MB behind.
        const onSignal = (): void => {
          rmSync(dir, { recursive: true, force: true });
          process.exit(130);
        };
        process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
        try {
          const db = join(dir, "bench.db");
          say(`duetime bench on ${db}`);
          const scheduler = await openScheduler(cmd, {}, db);
          let result: SelfBenchResult;
          try {
            result = await runSelfBench(scheduler, { db, jobs, windowMs, say });
          } finally {
            await scheduler.close();
          }
          if (o.json) outJson(result);
          else printResult(result);
          return selfBenchPassed(result) ? EXIT.ok : EXIT.failure;
        } finally {
          process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
          rmSync(dir, { recursive: true, force: true });
        }
      }),
    );
}

/** Where the database the other commands use lives (no file, as for a PostgreSQL URL: the current directory). */
function defaultParent(db: string): string {
  const where = parseDbLocation(db, "--db");
  return where.kind === "sqlite" && where.file !== null
    ? dirname(resolve(where.file))
    : process.cwd();
}

/** A fresh scratch directory inside `parent`; a bad --dir is a usage error. */
function scratchDir(parent: string, given: boolean): string {
  try {
    return mkdtempSync(join(parent, "duetime-bench-"));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EACCES" || code === "EROFS") {
      throw usageError(
        "--dir",
        given
          ? "an existing, writable directory"
          : "an existing, writable directory (by default the database's: that of $DUETIME_DB, else the current one)",
        parent,
      );
    }
    throw err;
  }
}

function printResult(r: SelfBenchResult): void {
  const rate = (x: Rate): string => `${x.perSecond.toLocaleString("en-US")}/s`;
  const n = (x: number): string => x.toLocaleString("en-US");
  const p = r.precision;
  const d = r.dispatch;
  const rows: string[][] = [
    ["bulk schedule (scheduleMany)", n(r.bulk.jobs), rate(r.bulk)],
    ["one at a time (schedule)", n(r.oneAtATime.jobs), rate(r.oneAtATime)],
    ["dispatch (due, no-op handler)", n(d.jobs), rate(d)],
    ["dispatch: lost / duplicated", n(d.jobs), `${d.lost} / ${d.duplicated}`],
    ["precision: lateness p50", n(p.jobs), `${p.latenessMs.p50} ms`],
    ["precision: lateness p99", n(p.jobs), `${p.latenessMs.p99} ms`],
    ["precision: lateness max", n(p.jobs), `${p.latenessMs.max} ms`],
    ["precision: early / lost / duplicated", n(p.jobs), `${p.early} / ${p.lost} / ${p.duplicated}`],
    ["stored: succeeded / pending", "", `${n(r.stored.succeeded)} / ${n(r.stored.pending)}`],
  ];
  out("");
  out(table(["PHASE", "JOBS", "RESULT"], rows, ["l", "r", "r"]));
  out(
    `backlog of ${n(r.backlog)} future jobs during the firing phases; ${(r.wallMs / 1000).toFixed(1)} s in all`,
  );
  if (p.leadMissed) out("note: storing the precision jobs took longer than their 1 s lead");
  out(
    selfBenchPassed(r)
      ? "every job fired once, none early, none lost; every outcome stored."
      : "PROBLEM: jobs fired early, twice or never, or outcomes are missing from the store.",
  );
}
