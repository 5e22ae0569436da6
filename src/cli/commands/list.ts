import type { Command } from "commander";
import { jobView } from "../../api/job-view.js";
import type { ListQuery } from "../../index.js";
import { JOB_STATUSES } from "../../core/job.js";
import { parseDueTime } from "../../core/time-input.js";
import { EXIT } from "../errors.js";
import {
  action,
  cliTime,
  out,
  outJson,
  parseIntFlag,
  resolveTimeZone,
  withExistingScheduler,
} from "../context.js";
import { attemptsText, formatInZone, plural, table, tagsText } from "../format.js";
import { callApi, listQuery, remoteWithoutTenant } from "../remote.js";
import { parseStatuses } from "../option-values.js";

interface ListOptions {
  status?: string;
  from?: string;
  to?: string;
  limit?: string;
  cursor?: string;
  tag?: string;
  tenant?: string;
  tz?: string;
  json?: boolean;
}

/** `duetime list`: a page of jobs in due order. */
export function registerList(program: Command): void {
  program
    .command("list")
    .description("list jobs in due order (with --tag: in creation order), one page at a time")
    .option("--status <status>", `filter by status, comma-separated (${JOB_STATUSES.join(", ")})`)
    .option("--from <when>", "due at or after this time")
    .option("--to <when>", "due before this time")
    .option("--limit <n>", "page size, 1 to 1000", "50")
    .option("--cursor <cursor>", "continue after a previous page (its next cursor)")
    .option(
      "--tag <tag>",
      "only jobs carrying this tag, read from the tag index, in creation order",
    )
    .option("--tenant <tenant>", "only this tenant's jobs")
    .option("--tz <iana>", "time zone for --from/--to and the due column (default: the system's)")
    .option("--json", "print the page as JSON")
    .action(
      action(async (o: ListOptions, cmd: Command) => {
        const timeZone = resolveTimeZone(o.tz);
        const remote = remoteWithoutTenant(cmd, o.tenant);
        if (remote) {
          const query = listQuery({
            limit: parseIntFlag(o.limit, "--limit", 1, 1000)!,
            ...(o.status === undefined ? {} : { status: parseStatuses(o.status) }),
            ...(o.from === undefined ? {} : { from: String(listTime(o.from, "--from")) }),
            ...(o.to === undefined ? {} : { to: String(listTime(o.to, "--to")) }),
            ...(o.cursor === undefined ? {} : { cursor: o.cursor }),
            ...(o.tag === undefined ? {} : { tag: o.tag }),
            timeZone,
          });
          const page = await callApi(remote, (c) => c.listJobs(query));
          if (o.json) outJson(page);
          else
            printPage(
              page.jobs.map((j) => ({ ...j, dueMs: Date.parse(j.dueAt) })),
              page.nextCursor,
              timeZone,
            );
          return EXIT.ok;
        }
        const now = Date.now();
        const when = (v: string, field: string): number =>
          parseDueTime(listTime(v, field), { now, timeZone, field });
        const query: ListQuery = {
          limit: parseIntFlag(o.limit, "--limit", 1, 1000)!,
          ...(o.status === undefined ? {} : { status: parseStatuses(o.status) }),
          ...(o.from === undefined ? {} : { dueFrom: when(o.from, "--from") }),
          ...(o.to === undefined ? {} : { dueTo: when(o.to, "--to") }),
          ...(o.cursor === undefined ? {} : { cursor: o.cursor }),
          ...(o.tag === undefined ? {} : { tag: o.tag }),
          ...(o.tenant === undefined ? {} : { tenant: o.tenant }),
        };
        const page = await withExistingScheduler(cmd, (s) => s.list(query));
        if (o.json) {
          outJson({ jobs: page.jobs.map(jobView), nextCursor: page.nextCursor });
          return EXIT.ok;
        }
        printPage(
          page.jobs.map((j) => ({ ...j, dueMs: j.dueAt })),
          page.nextCursor,
          timeZone,
        );
        return EXIT.ok;
      }),
    );
}

interface Row {
  id: string;
  status: string;
  dueMs: number;
  target: string;
  attempts: number;
  maxAttempts: number;
  tags: readonly string[];
}

function printPage(jobs: Row[], nextCursor: string | null, timeZone: string): void {
  if (jobs.length === 0) {
    out("no jobs");
  } else {
    out(
      table(
        ["ID", "STATUS", `DUE (${timeZone})`, "TARGET", "ATTEMPTS", "TAGS"],
        jobs.map((j) => [
          j.id,
          j.status,
          formatInZone(j.dueMs, timeZone),
          j.target,
          attemptsText(j),
          tagsText(j.tags),
        ]),
        ["l", "l", "l", "l", "r", "l"],
      ),
    );
  }
  out(
    nextCursor === null
      ? `(${plural(jobs.length, "job")}, last page)`
      : `(${plural(jobs.length, "job")}) next page: --cursor ${nextCursor}`,
  );
}

/** A range bound as typed: `0` (the epoch) is a fine lower bound, unlike a due time. */
function listTime(value: string, field: string): string | number {
  return cliTime(value, field, { epochZero: true });
}
