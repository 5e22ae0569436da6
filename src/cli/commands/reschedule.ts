import type { Command } from "commander";
import { InvalidJobError } from "../../core/errors.js";
import {
  action,
  cliTime,
  parseIntFlag,
  resolveTimeZone,
  withExistingScheduler,
} from "../context.js";
import { addFilterOptions, requireOneSelection, type FilterFlags } from "../bulk-options.js";
import { jobRefOf } from "../job-ref.js";
import { requireLocal } from "../remote.js";
import { reportMove } from "../outcomes.js";

interface RescheduleOptions extends FilterFlags {
  at?: string;
  shift?: string;
  key?: string;
  tz?: string;
  locale?: string;
  tenant?: string;
  expectedVersion?: string;
  json?: boolean;
}

/**
 * `duetime reschedule <id> <when>` (or `--key <key> <when>`): moves a pending job (snooze).
 * With a filter (`--tag user:42 --shift 1h` or `--at <when>`): every matching pending job,
 * as one bulk operation followed to its end (bulk.ts).
 */
export function registerReschedule(program: Command): void {
  const cmd = program
    .command("reschedule")
    .description(
      "move a pending job to a new due time (snooze); with a filter and --shift or --at, every matching pending job",
    )
    .argument("[id]", "job id (with --key: the new due time)")
    .argument(
      "[when]",
      'new due time: ISO (without an offset: read in --tz), epoch ms, "in 1 hour", "monday 8am"',
    )
    .option("--key <key>", "the live job holding this idempotency key, instead of an id")
    .option("--tz <iana>", "time zone for wall times and words (default: the system's)")
    .option("--locale <tag>", 'language of <when> in words: fr ("demain à 9h"), de, ja, zh-Hant...')
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--expected-version <n>", "apply only if the job is still at this version")
    .option("--json", "print the outcome (bulk: the operation's final record) as JSON")
    .option("--shift <duration>", 'bulk: move each job by this much ("1h", "-30m", "2 days", ms)')
    .option("--at <when>", "bulk: move every job to this time");
  addFilterOptions(cmd)
    .addHelpText(
      "after",
      `
Examples:
  duetime reschedule 01KB2Y7J3W6D3Q4S0R5T8V9X1Z "in 1 hour"
  duetime reschedule --key standup:42 "tomorrow 9am"
  duetime reschedule --tag user:42 --shift 1d          (every pending job a day later)
  duetime reschedule --tag campaign:spring --at "2026-04-01T09:00" --tz Europe/Paris`,
    )
    .action(
      action(
        async (
          first: string | undefined,
          second: string | undefined,
          o: RescheduleOptions,
          cmd: Command,
        ) => {
          const named = first !== undefined || o.key !== undefined;
          if (requireOneSelection(named, o, "a job id (or --key) and a time")) {
            const { runBulk } = await import("../bulk.js");
            return runBulk(cmd, "reschedule", o);
          }
          for (const flag of ["at", "shift"] as const) {
            if (o[flag] !== undefined) {
              throw new InvalidJobError(
                `--${flag}`,
                "a filter beside it (or <when> for one job)",
                o[flag],
              );
            }
          }
          requireLocal(cmd, "reschedule");
          // with --key the one argument is the due time; without it, the id then the due time
          const ref = jobRefOf(o.key === undefined ? first : second, o.key);
          const when = o.key === undefined ? second : first;
          if (when === undefined) throw new InvalidJobError("when", "a new due time", when);
          const timeZone = resolveTimeZone(o.tz);
          const expectedVersion = parseIntFlag(o.expectedVersion, "--expected-version", 0, 2 ** 52);
          const dueAt = cliTime(when, "when");
          const opts = {
            timeZone,
            ...(o.locale === undefined ? {} : { locale: o.locale }),
            ...(o.tenant === undefined ? {} : { tenant: o.tenant }),
            ...(expectedVersion === undefined ? {} : { expectedVersion }),
          };
          const r = await withExistingScheduler(cmd, (s) =>
            "key" in ref
              ? s.rescheduleByKey(ref.key, dueAt, opts)
              : s.reschedule(ref.id, dueAt, opts),
          );
          return reportMove(r, ref, { json: o.json, timeZone, verb: "rescheduled" });
        },
      ),
    );
}
