import type { Command } from "commander";
import type { ScheduleView } from "../../api/schedule-view.js";
import { InvalidJobError } from "../../core/errors.js";
import type { ScheduleState } from "../../core/series.js";
import { EXIT } from "../errors.js";
import { parseHeaders, parsePayload } from "../option-values.js";
import { action, cliTime, out, outJson, parseIntFlag, resolveTimeZone } from "../context.js";
import { whenFound } from "../not-found.js";
import { formatRelative, labelled, plural, table } from "../format.js";
import {
  seriesBackend,
  type ChangeVerb,
  type Occurrences,
  type SeriesInput,
} from "../series-backend.js";

interface AddOptions {
  cron?: string;
  rrule?: string;
  tz?: string;
  target: string;
  payload?: string;
  key?: string;
  start?: string;
  end?: string;
  count?: string;
  gap?: string;
  overlap?: string;
  misfire?: string;
  tenant?: string;
  maxAttempts?: string;
  expireAfter?: string;
  header?: string[];
  json?: boolean;
}

/**
 * `duetime schedule add|list|show|next|pause|resume|rm`: recurring series, on the local
 * database or a server (--url), through series-backend.ts; `--json` prints the one schedule
 * view (src/api/schedule-view.ts) the HTTP API answers with.
 */
export function registerSchedule(program: Command): void {
  const schedule = program
    .command("schedule")
    .description("recurring series: a cron or RRULE rule in a time zone (docs/recurring.md)");
  registerAdd(schedule);
  schedule
    .command("list")
    .description("list schedules in creation order, one page at a time")
    .option("--state <state>", "active, paused or ended")
    .option("--limit <n>", "page size, 1 to 1000", "100")
    .option("--cursor <cursor>", "continue after a previous page (its next cursor)")
    .option("--tenant <tenant>", "only this tenant's schedules")
    .option("--json", "print the page as JSON")
    .action(
      action(async (o: Record<string, string | undefined>, cmd: Command) => {
        const page = await seriesBackend(cmd, o.tenant).list({
          limit: parseIntFlag(o.limit, "--limit", 1, 1000)!,
          ...(o.state === undefined ? {} : { state: o.state as ScheduleState }),
          ...(o.cursor === undefined ? {} : { cursor: o.cursor }),
        });
        if (o.json) outJson(page);
        else printPage(page.schedules, page.nextCursor);
        return EXIT.ok;
      }),
    );
  schedule
    .command("show")
    .description("show one schedule")
    .argument("<id>", "schedule id")
    .option("--tenant <tenant>", "only if the schedule belongs to this tenant")
    .option("--json", "print the schedule as JSON")
    .action(
      action(async (id: string, o: { tenant?: string; json?: boolean }, cmd: Command) =>
        whenFound(o, id, async () => {
          const s = await seriesBackend(cmd, o.tenant).get(id);
          if (o.json) outJson(s);
          else out(describeSchedule(s, Date.now()));
          return EXIT.ok;
        }),
      ),
    );
  registerNext(schedule);
  for (const [name, verb, what] of [
    ["pause", "pause", "pause a schedule (its pending occurrence is cancelled)"],
    ["resume", "resume", "resume a paused schedule from its first occurrence after now"],
    ["rm", "delete", "delete a schedule (its pending occurrence is cancelled)"],
  ] as const) {
    schedule
      .command(name)
      .description(what)
      .argument("<id>", "schedule id")
      .option("--tenant <tenant>", "only if the schedule belongs to this tenant")
      .option("--json", "print the schedule as JSON")
      .action(
        action(async (id: string, o: { tenant?: string; json?: boolean }, cmd: Command) =>
          whenFound(o, id, async () => {
            const s = await seriesBackend(cmd, o.tenant).change(id, verb as ChangeVerb);
            if (o.json) outJson({ outcome: verb === "delete" ? "deleted" : s.state, schedule: s });
            else out(`${verb === "delete" ? "deleted" : s.state} schedule ${s.id}`);
            return EXIT.ok;
          }),
        ),
      );
  }
}

function registerAdd(schedule: Command): void {
  schedule
    .command("add")
    .description("create a recurring series")
    .option("--cron <expr>", 'a 5- or 6-field cron expression, e.g. "0 9 * * 1-5"')
    .option(
      "--rrule <rule>",
      'an RFC 5545 RRULE, e.g. "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0" (without BYMINUTE and BYSECOND: those of --start, default now)',
    )
    .option("--tz <iana>", "time zone the rule is read in (default: the system's)")
    .requiredOption("--target <handler>", "handler name (or webhook URL with --url) each fires")
    .option("--payload <json>", "JSON payload of each occurrence")
    .option("--key <key>", "idempotency key: adding it again returns the stored schedule")
    .option("--start <when>", "no occurrence before this")
    .option("--end <when>", "no occurrence after this")
    .option("--count <n>", "most occurrences fired")
    .option("--gap <policy>", "a local time the clocks skip: shift (default) or skip")
    .option("--overlap <policy>", "a local time shown twice: first (default) or both")
    .option("--misfire <policy>", "after downtime: fire-once (default), fire-all or skip")
    .option("--tenant <tenant>", "tenant owning the schedule")
    .option("--max-attempts <n>", "attempts of each occurrence before it is dead")
    .option("--expire-after <ms>", "an occurrence claimed this late expires instead (ms)")
    .option("--header <name:value>", "webhook header (with --url; repeatable)", collect)
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Examples:
  duetime schedule add --cron "0 9 * * 1-5" --tz Europe/Paris --target standup
  duetime schedule add --rrule "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=18;BYMINUTE=0;BYSECOND=0" --tz America/New_York --target report
  duetime schedule add --cron "30 2 * * *" --tz Europe/Paris --gap skip --target backup --count 30`,
    )
    .action(
      action(async (o: AddOptions, cmd: Command) => {
        const r = await seriesBackend(cmd, o.tenant).create(addInput(o));
        if (o.json) outJson(r);
        else {
          out(
            r.created
              ? `created schedule ${r.schedule.id}`
              : `matched existing schedule ${r.schedule.id} (key ${JSON.stringify(r.schedule.key)}; nothing new)`,
          );
          out(describeSchedule(r.schedule, Date.now()));
        }
        return EXIT.ok;
      }),
    );
}

function registerNext(schedule: Command): void {
  schedule
    .command("next")
    .description("the next occurrences of a stored schedule, or of --cron/--rrule not stored")
    .argument("[id]", "schedule id (or give --cron or --rrule)")
    .option("--cron <expr>", "a cron expression to preview")
    .option("--rrule <rule>", "an RRULE to preview")
    .option("--tz <iana>", "time zone of --cron/--rrule (default: the system's)")
    .option("--count <n>", "how many, 1 to 100", "10")
    .option("--from <when>", "occurrences after this (default: now)")
    .option("--tenant <tenant>", "only if the schedule belongs to this tenant")
    .option("--json", "print the occurrences as JSON")
    .action(
      action(
        async (id: string | undefined, o: Record<string, string | undefined>, cmd: Command) => {
          const window = {
            count: parseIntFlag(o.count, "--count", 1, 100)!,
            ...(o.from === undefined ? {} : { from: cliTime(o.from, "--from") }),
          };
          const backend = seriesBackend(cmd, o.tenant);
          const rule = o.cron !== undefined || o.rrule !== undefined;
          if ((id === undefined) === !rule) {
            throw new InvalidJobError("id", "a schedule id, or --cron/--rrule (not both)", id);
          }
          return whenFound(o, id ?? "", async () => {
            const r: Occurrences =
              id !== undefined
                ? await backend.next(id, window)
                : await backend.preview(
                    {
                      ...(o.cron === undefined ? {} : { cron: o.cron }),
                      ...(o.rrule === undefined ? {} : { rrule: o.rrule }),
                      timeZone: resolveTimeZone(o.tz),
                    },
                    window,
                  );
            if (o.json) outJson(r);
            else printOccurrences(r);
            return EXIT.ok;
          });
        },
      ),
    );
}

function addInput(o: AddOptions): SeriesInput {
  const int = (v: string | undefined, flag: string, max: number) =>
    v === undefined ? undefined : parseIntFlag(v, flag, flag === "--expire-after" ? 0 : 1, max);
  const fields: Record<string, unknown> = {
    cron: o.cron,
    rrule: o.rrule,
    timeZone: resolveTimeZone(o.tz),
    target: o.target,
    payload: o.payload === undefined ? undefined : parsePayload(o.payload),
    key: o.key,
    start: o.start === undefined ? undefined : cliTime(o.start, "--start"),
    end: o.end === undefined ? undefined : cliTime(o.end, "--end"),
    count: int(o.count, "--count", 100_000),
    gap: o.gap,
    overlap: o.overlap,
    misfire: o.misfire,
    maxAttempts: int(o.maxAttempts, "--max-attempts", 1000),
    expireAfterMs: int(o.expireAfter, "--expire-after", 2 ** 52),
    headers: o.header === undefined ? undefined : parseHeaders(o.header),
  };
  return Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== undefined),
  ) as unknown as SeriesInput;
}

/** One schedule, every field people read, as `show` describes a job. */
export function describeSchedule(s: ScheduleView, now: number): string {
  const lines: [string, string][] = [
    ["id", s.id],
    ["state", s.state],
    ["rule", s.cron !== null ? `cron "${s.cron}"` : `RRULE ${s.rrule}`],
    ["in words", s.description],
    [
      "next",
      s.nextAt === null ? "-" : `${s.nextAtLocal}  (${formatRelative(Date.parse(s.nextAt), now)})`,
    ],
    ["target", s.target],
    ["payload", JSON.stringify(s.payload)],
    ["key", s.key ?? "-"],
    ["tenant", s.tenant],
    [
      "fired",
      `${s.firedCount}${s.count === null ? "" : ` of ${s.count}`}, missed ${s.missedCount}`,
    ],
    ["last", s.lastOutcome === null ? "-" : `${s.lastOutcome.status} (job ${s.lastOutcome.jobId})`],
    ["policies", `gap ${s.gap}, overlap ${s.overlap}, misfire ${s.misfire}`],
    ["version", String(s.version)],
    ["created", s.createdAt],
  ];
  if (s.start !== null) lines.push(["start", s.start]);
  if (s.end !== null) lines.push(["end", s.end]);
  if (s.headers !== null) lines.push(["headers", JSON.stringify(s.headers)]);
  return labelled(lines);
}

function printPage(schedules: ScheduleView[], nextCursor: string | null): void {
  if (schedules.length === 0) out("no schedules");
  else {
    out(
      table(
        ["ID", "STATE", "NEXT (local)", "RULE"],
        schedules.map((s) => [s.id, s.state, s.nextAtLocal ?? "-", s.description]),
      ),
    );
  }
  out(
    nextCursor === null
      ? `(${plural(schedules.length, "schedule")}, last page)`
      : `(${plural(schedules.length, "schedule")}) next page: --cursor ${nextCursor}`,
  );
}

function printOccurrences(r: Occurrences): void {
  out(
    table(
      ["AT (UTC)", `LOCAL (${r.timeZone})`, "MAPPING"],
      r.occurrences.map((x) => [x.at, x.atLocal, x.mapping]),
    ),
  );
}

function collect(v: string, acc: string[] = []): string[] {
  return [...acc, v];
}
