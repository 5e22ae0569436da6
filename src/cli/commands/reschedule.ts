import type { Command } from "commander";
import { InvalidJobError } from "../../core/errors.js";
import {
  action,
  cliTime,
  parseIntFlag,
  resolveTimeZone,
  withExistingScheduler,
} from "../context.js";
import { jobRefOf } from "../job-ref.js";
import { reportMove } from "../outcomes.js";

interface RescheduleOptions {
  key?: string;
  tz?: string;
  locale?: string;
  tenant?: string;
  expectedVersion?: string;
  json?: boolean;
}

/** `duetime reschedule <id> <when>` (or `--key <key> <when>`): moves a pending job (snooze). */
export function registerReschedule(program: Command): void {
  program
    .command("reschedule")
    .description("move a pending job to a new due time (snooze)")
    .argument("<id>", "job id (with --key: the new due time)")
    .argument(
      "[when]",
      'new due time: ISO (without an offset: read in --tz), epoch ms, "in 1 hour", "monday 8am"',
    )
    .option("--key <key>", "the live job holding this idempotency key, instead of an id")
    .option("--tz <iana>", "time zone for wall times and words (default: the system's)")
    .option("--locale <tag>", 'language of <when> in words: fr ("demain à 9h"), de, ja, zh-Hant...')
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--expected-version <n>", "apply only if the job is still at this version")
    .option("--json", "print the outcome as JSON")
    .action(
      action(
        async (first: string, second: string | undefined, o: RescheduleOptions, cmd: Command) => {
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
