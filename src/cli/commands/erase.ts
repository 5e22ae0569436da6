import type { Command } from "commander";
import { InvalidJobError } from "../../core/errors.js";
import { addFilterOptions, hasFilter, type FilterFlags } from "../bulk-options.js";
import { action } from "../context.js";

interface EraseOptions extends FilterFlags {
  tenant?: string;
  tz?: string;
  json?: boolean;
}

/**
 * `duetime erase --tag user:42`: deletes every matching job that is not firing, live and
 * finished, with its history and change-feed rows (a data subject's erasure request), as
 * one bulk operation followed to its end (bulk.ts). Filter only: no single-job form.
 */
export function registerErase(program: Command): void {
  const cmd = program
    .command("erase")
    .description(
      "delete every job matching a filter (pending and finished, history included), as a bulk operation with progress",
    )
    .option("--tenant <tenant>", "that tenant's jobs (default: the default tenant)")
    .option("--tz <iana>", "time zone for --due-from/--due-to (default: the system's)")
    .option("--json", "print the operation's final record as JSON");
  addFilterOptions(cmd)
    .addHelpText(
      "after",
      `
Examples:
  duetime erase --tag user:42 --count     (how many jobs it would delete)
  duetime erase --tag user:42`,
    )
    .action(
      action(async (o: EraseOptions, cmd: Command) => {
        if (!hasFilter(o)) {
          throw new InvalidJobError(
            "--tag",
            "a filter (--tag, --target, --status, --due-from, --due-to, --key-prefix)",
            undefined,
          );
        }
        const { runBulk } = await import("../bulk.js");
        return runBulk(cmd, "erase", o);
      }),
    );
}
