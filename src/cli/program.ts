import { Command } from "commander";
import { EXIT_CODES_HELP } from "./errors.js";
import { registerAdd } from "./commands/add.js";
import { registerBench } from "./commands/bench.js";
import { registerCancel } from "./commands/cancel.js";
import { registerDemo } from "./commands/demo.js";
import { registerErase } from "./commands/erase.js";
import { registerKeys } from "./commands/keys.js";
import { registerList } from "./commands/list.js";
import { registerMcp } from "./commands/mcp.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerPause } from "./commands/pause.js";
import { registerReschedule } from "./commands/reschedule.js";
import { registerRetry } from "./commands/retry.js";
import { registerRun } from "./commands/run.js";
import { registerSchedule } from "./commands/schedule.js";
import { registerServe } from "./commands/serve.js";
import { registerShow } from "./commands/show.js";
import { registerStats } from "./commands/stats.js";

/**
 * The `duetime` command tree. Settings made here before the subcommands are created
 * (exitOverride, help options) are inherited by every subcommand.
 */
export function buildProgram(version: string): Command {
  const program = new Command("duetime")
    .description("a durable scheduler for millions of future one-shot jobs")
    .version(version)
    .option(
      "--db <path|url>",
      "SQLite file or postgres:// URL (default: $DUETIME_DB or ./duetime.db)",
    )
    .option("--granularity <g>", "bucket width of a new database: minute, hour or day")
    .option(
      "--url <url>",
      "talk to a duetime server instead of a database (default: $DUETIME_URL); add, list, show, cancel, stats, schedule, pause, resume, pauses, and reschedule, retry, erase with a filter",
    )
    .option("--api-key <key>", "API key for --url (default: $DUETIME_KEY)")
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .addHelpText("after", EXIT_CODES_HELP);
  registerAdd(program);
  registerList(program);
  registerShow(program);
  registerCancel(program);
  registerReschedule(program);
  registerRetry(program);
  registerErase(program);
  registerSchedule(program);
  registerPause(program);
  registerStats(program);
  registerRun(program);
  registerMigrate(program);
  registerDemo(program);
  registerBench(program);
  registerMcp(program);
  registerServe(program);
  registerKeys(program);
  return program;
}
