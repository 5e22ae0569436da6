import type { Command } from "commander";
import type { JsonValue, ScheduleInput } from "../../index.js";
import { InvalidJobError } from "../../core/errors.js";
import { EXIT } from "../errors.js";
import { action, out, outJson, parseIntFlag, resolveTimeZone, withScheduler } from "../context.js";
import { describeJob, formatInZone } from "../format.js";

interface AddOptions {
  target: string;
  payload?: string;
  key?: string;
  tz?: string;
  tenant?: string;
  maxAttempts?: string;
  expireAfter?: string;
  json?: boolean;
}

/** `duetime add <when>`: schedules one job. */
export function registerAdd(program: Command): void {
  program
    .command("add")
    .description("schedule a job")
    .argument("<when>", 'ISO time with offset, epoch ms, "in 10 minutes", "tomorrow 9am"')
    .requiredOption("--target <handler>", "handler name the job fires")
    .option("--payload <json>", "JSON payload handed to the handler")
    .option("--key <key>", "idempotency key: adding it again returns the live job holding it")
    .option("--tz <iana>", "time zone for natural-language times (default: the system's)")
    .option("--tenant <tenant>", "tenant owning the job")
    .option("--max-attempts <n>", "attempts before the job is dead")
    .option("--expire-after <ms>", "expire instead of firing when claimed this late (ms)")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Examples:
  duetime add "in 10 minutes" --target remind --payload '{"user":42}'
  duetime add "tomorrow 9am" --tz Europe/Paris --target wake --key wake-42
  duetime add 2026-12-01T09:00:00+01:00 --target report`,
    )
    .action(
      action(async (when: string, o: AddOptions, cmd: Command) => {
        const timeZone = resolveTimeZone(o.tz);
        const input: ScheduleInput = {
          dueAt: /^\d+$/.test(when.trim()) ? Number(when) : when,
          timeZone,
          target: o.target,
          ...(o.payload === undefined ? {} : { payload: parsePayload(o.payload) }),
          ...(o.key === undefined ? {} : { key: o.key }),
          ...(o.tenant === undefined ? {} : { tenant: o.tenant }),
          ...(o.maxAttempts === undefined
            ? {}
            : { maxAttempts: parseIntFlag(o.maxAttempts, "--max-attempts", 1, 1000)! }),
          ...(o.expireAfter === undefined
            ? {}
            : { expireAfterMs: parseIntFlag(o.expireAfter, "--expire-after", 0, 2 ** 52)! }),
        };
        const { job, created } = await withScheduler(cmd, (s) => s.schedule(input));
        if (o.json) {
          outJson({
            created,
            job,
            dueAtIso: new Date(job.dueAt).toISOString(),
            dueAtLocal: formatInZone(job.dueAt, timeZone),
            bucketIso: new Date(job.bucket).toISOString(),
            timeZone,
          });
        } else {
          out(
            created
              ? `created job ${job.id}`
              : `matched existing job ${job.id} (key ${JSON.stringify(job.key)}; nothing new scheduled)`,
          );
          out(describeJob(job, timeZone, Date.now()));
        }
        return EXIT.ok;
      }),
    );
}

function parsePayload(raw: string): JsonValue {
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    throw new InvalidJobError("--payload", "JSON (e.g. '{\"user\":42}')", raw);
  }
}
