import type { Command } from "commander";
import { jobView } from "../../api/job-view.js";
import type { KeyMode, ScheduleInput } from "../../index.js";
import type { JobCallbacks } from "../../core/job.js";
import type { Job as JobView } from "../../client/index.js";
import { InvalidJobError } from "../../core/errors.js";
import { EXIT } from "../errors.js";
import { collect, parseHeaders, parsePayload } from "../option-values.js";
import {
  action,
  cliTime,
  out,
  outJson,
  parseIntFlag,
  resolveTimeZone,
  withScheduler,
} from "../context.js";
import { describeJob, formatInZone } from "../format.js";
import { callApi, describeJobView, remoteOf, RemoteOutcome } from "../remote.js";

interface AddOptions {
  target: string;
  payload?: string;
  key?: string;
  keyMode?: string;
  maxWait?: string;
  tz?: string;
  locale?: string;
  tenant?: string;
  maxAttempts?: string;
  expireAfter?: string;
  header?: string[];
  tag?: string[];
  onSuccess?: string;
  onFailure?: string;
  onDead?: string;
  json?: boolean;
}

/** `duetime add <when>`: schedules one job. */
export function registerAdd(program: Command): void {
  program
    .command("add")
    .description("schedule a job")
    .argument(
      "<when>",
      'ISO time (without an offset: read in --tz), epoch ms, "in 10 minutes", "tomorrow 9am"',
    )
    .requiredOption("--target <handler>", "handler name the job fires")
    .option("--payload <json>", "JSON payload handed to the handler")
    .option("--key <key>", "idempotency key: adding it again returns the live job holding it")
    .option(
      "--key-mode <mode>",
      "with --key: keep (default: the live job stays), replace (the pending job takes this one's time and payload), debounce (replace, bounded by --max-wait)",
    )
    .option(
      "--max-wait <ms>",
      "with --key-mode debounce: fire at most this long after the first add",
    )
    .option("--tz <iana>", "time zone for wall times and words (default: the system's)")
    .option("--locale <tag>", 'language of <when> in words: fr ("demain à 9h"), de, ja, zh-Hant...')
    .option("--tenant <tenant>", "tenant owning the job")
    .option(
      "--tag <tag>",
      "a tag to find and act on the job by, e.g. user:42 (repeatable)",
      collect,
    )
    .option("--on-success <url>", "callback URL POSTed when the job succeeds")
    .option("--on-failure <url>", "callback URL POSTed after each failed attempt that is retried")
    .option("--on-dead <url>", "callback URL POSTed when the job is dead (no attempts left)")
    .option("--max-attempts <n>", "attempts before the job is dead")
    .option("--expire-after <ms>", "expire instead of firing when claimed this late (ms)")
    .option("--header <name:value>", "webhook header (with --url; repeatable)", collect)
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Examples:
  duetime add "in 10 minutes" --target remind --payload '{"user":42}'
  duetime add "tomorrow 9am" --tz Europe/Paris --target wake --key wake-42
  duetime add "in 1 hour" --target remind --tag user:42 --tag campaign:spring
  duetime add "in 1 day" --target https://example.com/hook --on-dead https://example.com/alert --url http://127.0.0.1:8080
  duetime add "in 30 seconds" --target flush --key user:42 --key-mode debounce --max-wait 120000
  duetime add 2026-12-01T09:00:00+01:00 --target report
  duetime add 2026-12-03T10:00 --tz Europe/Paris --target report   (a wall time in --tz)
  duetime add "demain à 9h" --locale fr --tz Europe/Paris --target wake`,
    )
    .action(
      action(async (when: string, o: AddOptions, cmd: Command) => {
        const timeZone = resolveTimeZone(o.tz);
        const remote = remoteOf(cmd);
        if (remote) {
          if (o.tenant !== undefined) {
            throw new InvalidJobError(
              "--tenant",
              "no --tenant with --url (the API key's tenant owns the job)",
              o.tenant,
            );
          }
          const input = {
            dueAt: cliTime(when, "when"),
            timeZone,
            ...(o.locale === undefined ? {} : { locale: o.locale }),
            target: o.target,
            ...(o.payload === undefined ? {} : { payload: parsePayload(o.payload) }),
            ...(o.key === undefined ? {} : { key: o.key }),
            ...keyModeFields(o),
            ...(o.tag === undefined ? {} : { tags: o.tag }),
            ...callbackFields(o),
            ...(o.header === undefined ? {} : { headers: parseHeaders(o.header) }),
            ...(o.maxAttempts === undefined
              ? {}
              : { maxAttempts: parseIntFlag(o.maxAttempts, "--max-attempts", 1, 1000)! }),
            ...(o.expireAfter === undefined
              ? {}
              : { expireAfterMs: parseIntFlag(o.expireAfter, "--expire-after", 0, 2 ** 52)! }),
          };
          const r = await callApi(remote, (c) => c.createJob(input)).catch((err: unknown) => {
            if (err instanceof RemoteOutcome && err.status === 409) return err;
            throw err;
          });
          if (r instanceof RemoteOutcome) {
            const job = r.body.job as JobView;
            if (o.json) outJson({ outcome: "too-late", job });
            else out(tooLateText(job.id));
            return EXIT.tooLate;
          }
          const due = Date.parse(r.job.dueAt);
          if (o.json) {
            outJson({
              created: r.created,
              outcome: r.outcome,
              job: r.job,
              dueAtIso: r.job.dueAt,
              dueAtLocal: formatInZone(due, timeZone),
              timeZone,
            });
          } else {
            out(outcomeText(r.outcome, r.job.id, r.job.key));
            out(describeJobView(r.job, timeZone, Date.now()));
          }
          return EXIT.ok;
        }
        if (o.header !== undefined) {
          throw new InvalidJobError(
            "--header",
            "--url (headers are for webhooks of a server)",
            o.header[0],
          );
        }
        const input: ScheduleInput = {
          dueAt: cliTime(when, "when"),
          timeZone,
          ...(o.locale === undefined ? {} : { locale: o.locale }),
          target: o.target,
          ...(o.payload === undefined ? {} : { payload: parsePayload(o.payload) }),
          ...(o.key === undefined ? {} : { key: o.key }),
          ...keyModeFields(o),
          ...(o.tag === undefined ? {} : { tags: o.tag }),
          ...callbackFields(o),
          ...(o.tenant === undefined ? {} : { tenant: o.tenant }),
          ...(o.maxAttempts === undefined
            ? {}
            : { maxAttempts: parseIntFlag(o.maxAttempts, "--max-attempts", 1, 1000)! }),
          ...(o.expireAfter === undefined
            ? {}
            : { expireAfterMs: parseIntFlag(o.expireAfter, "--expire-after", 0, 2 ** 52)! }),
        };
        const { job, created, outcome } = await withScheduler(cmd, (s) => s.schedule(input));
        if (outcome === "too-late") {
          if (o.json) outJson({ outcome, job: jobView(job) });
          else out(tooLateText(job.id));
          return EXIT.tooLate;
        }
        if (o.json) {
          // the one JSON view of a job, as the HTTP API (and add --url) prints it
          const view = jobView(job);
          outJson({
            created,
            outcome,
            job: view,
            dueAtIso: view.dueAt,
            dueAtLocal: formatInZone(job.dueAt, timeZone),
            timeZone,
          });
        } else {
          out(outcomeText(outcome, job.id, job.key));
          out(describeJob(job, timeZone, Date.now()));
        }
        return EXIT.ok;
      }),
    );
}

/** --key-mode and --max-wait as the library's fields (which check them against --key). */
function keyModeFields(o: AddOptions): { keyMode?: KeyMode; maxWaitMs?: number } {
  return {
    ...(o.keyMode === undefined ? {} : { keyMode: o.keyMode as KeyMode }),
    ...(o.maxWait === undefined
      ? {}
      : { maxWaitMs: parseIntFlag(o.maxWait, "--max-wait", 0, 2 ** 52)! }),
  };
}

/**
 * --on-success, --on-failure and --on-dead as the library's `callbacks` (checked there, or
 * by the server under its webhook address policy with --url).
 */
function callbackFields(o: AddOptions): { callbacks?: JobCallbacks } {
  const callbacks = {
    ...(o.onSuccess === undefined ? {} : { onSuccess: o.onSuccess }),
    ...(o.onFailure === undefined ? {} : { onFailure: o.onFailure }),
    ...(o.onDead === undefined ? {} : { onDead: o.onDead }),
  };
  return Object.keys(callbacks).length === 0 ? {} : { callbacks };
}

function outcomeText(outcome: string, id: string, key: string | null): string {
  if (outcome === "created") return `created job ${id}`;
  if (outcome === "replaced") return `replaced job ${id} (key ${JSON.stringify(key)})`;
  return `matched existing job ${id} (key ${JSON.stringify(key)}; nothing new scheduled)`;
}

function tooLateText(id: string): string {
  return `too-late: job ${id} holding the key is firing now (claimed); nothing was replaced`;
}
