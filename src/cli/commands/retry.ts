import type { Command } from "commander";
import { parseDueTime } from "../../core/time-input.js";
import {
  action,
  cliTime,
  parseIntFlag,
  resolveTimeZone,
  withExistingScheduler,
} from "../context.js";
import { reportMove } from "../outcomes.js";

interface RetryOptions {
  at?: string;
  tz?: string;
  tenant?: string;
  expectedVersion?: string;
  json?: boolean;
}

/** `duetime retry <id>`: puts a dead job back to pending with fresh attempts. */
export function registerRetry(program: Command): void {
  program
    .command("retry")
    .description("put a dead job back to pending, with a fresh attempt budget")
    .argument("<id>", "job id")
    .option("--at <when>", "when to fire it (default: now)")
    .option("--tz <iana>", "time zone for a natural-language --at (default: the system's)")
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--expected-version <n>", "apply only if the job is still at this version")
    .option("--json", "print the outcome as JSON")
    .action(
      action(async (id: string, o: RetryOptions, cmd: Command) => {
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
