import type { Command } from "commander";
import { InvalidJobError } from "../../core/errors.js";
import { parseDueTime } from "../../core/time-input.js";
import {
  action,
  cliTime,
  parseIntFlag,
  resolveTimeZone,
  withExistingScheduler,
} from "../context.js";
import { requireLocal } from "../remote.js";
import { addFilterOptions, requireOneSelection, type FilterFlags } from "../bulk-options.js";
import { reportMove } from "../outcomes.js";

interface RetryOptions extends FilterFlags {
  at?: string;
  tz?: string;
  tenant?: string;
  expectedVersion?: string;
  json?: boolean;
}

/**
 * `duetime retry <id>`: puts a dead job back to pending with fresh attempts. With a filter
 * (`--tag user:42`, `--target ...`): every matching dead job, as one bulk operation (bulk.ts).
 */
export function registerRetry(program: Command): void {
  const cmd = program
    .command("retry")
    .description(
      "put a dead job back to pending, with a fresh attempt budget; with a filter, every matching dead job",
    )
    .argument("[id]", "job id (or give a filter)")
    .option("--at <when>", "when to fire it (default: now)")
    .option("--tz <iana>", "time zone for a natural-language --at (default: the system's)")
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--expected-version <n>", "apply only if the job is still at this version")
    .option("--json", "print the outcome (bulk: the operation's final record) as JSON");
  addFilterOptions(cmd).action(
    action(async (id: string | undefined, o: RetryOptions, cmd: Command) => {
      if (requireOneSelection(id !== undefined, o, "a job id")) {
        const { runBulk } = await import("../bulk.js");
        return runBulk(cmd, "retry", o);
      }
      if (id === undefined) throw new InvalidJobError("id", "a job id", id);
      requireLocal(cmd, "retry");
      const timeZone = resolveTimeZone(o.tz);
      const expectedVersion = parseIntFlag(o.expectedVersion, "--expected-version", 0, 2 ** 52);
      // Scheduler.retry takes no time zone, so a natural-language --at is read here.
      const dueAt =
        o.at === undefined
          ? undefined
          : parseDueTime(cliTime(o.at, "--at"), {
              now: Date.now(),
              timeZone,
              field: "--at",
            });
      const r = await withExistingScheduler(cmd, (s) =>
        s.retry(id, {
          ...(dueAt === undefined ? {} : { dueAt }),
          ...(o.tenant === undefined ? {} : { tenant: o.tenant }),
          ...(expectedVersion === undefined ? {} : { expectedVersion }),
        }),
      );
      return reportMove(r, { id }, { json: o.json, timeZone, verb: "retrying" });
    }),
  );
}
