import type { Command } from "commander";
import {
  action,
  cliTime,
  parseIntFlag,
  resolveTimeZone,
  withExistingScheduler,
} from "../context.js";
import { reportMove } from "../outcomes.js";

interface RescheduleOptions {
  tz?: string;
  locale?: string;
  tenant?: string;
  expectedVersion?: string;
  json?: boolean;
}

/** `duetime reschedule <id> <when>`: moves a pending job (snooze). */
export function registerReschedule(program: Command): void {
  program
    .command("reschedule")
    .description("move a pending job to a new due time (snooze)")
    .argument("<id>", "job id")
    .argument(
      "<when>",
      'new due time: ISO (without an offset: read in --tz), epoch ms, "in 1 hour", "monday 8am"',
    )
    .option("--tz <iana>", "time zone for wall times and words (default: the system's)")
    .option("--locale <tag>", 'language of <when> in words: fr ("demain à 9h"), de, ja, zh-Hant...')
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--expected-version <n>", "apply only if the job is still at this version")
    .option("--json", "print the outcome as JSON")
    .action(
      action(async (id: string, when: string, o: RescheduleOptions, cmd: Command) => {
        const timeZone = resolveTimeZone(o.tz);
        const expectedVersion = parseIntFlag(o.expectedVersion, "--expected-version", 0, 2 ** 52);
        const dueAt = cliTime(when, "when");
        const r = await withExistingScheduler(cmd, (s) =>
          s.reschedule(id, dueAt, {
            timeZone,
            ...(o.locale === undefined ? {} : { locale: o.locale }),
            ...(o.tenant === undefined ? {} : { tenant: o.tenant }),
            ...(expectedVersion === undefined ? {} : { expectedVersion }),
          }),
        );
        return reportMove(r, id, { json: o.json, timeZone, verb: "rescheduled" });
      }),
    );
}
