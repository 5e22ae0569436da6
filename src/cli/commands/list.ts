import type { Command } from "commander";
import { jobView } from "../../api/job-view.js";
import type { JobStatus, ListQuery } from "../../index.js";
import { JOB_STATUSES } from "../../core/job.js";
import { parseDueTime } from "../../core/time-input.js";
import { InvalidJobError } from "../../core/errors.js";
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
import { attemptsText, formatInZone, plural, table } from "../format.js";
import { callApi, listQuery, remoteWithoutTenant } from "../remote.js";

interface ListOptions {
  status?: string;
  from?: string;
  to?: string;
  limit?: string;
  cursor?: string;
  tenant?: string;
  tz?: string;
  json?: boolean;
}

/** `duetime list`: a page of jobs in due order. */
export function registerList(program: Command): void {
  program
    .command("list")
    .description("list jobs in due order, one page at a time")
    .option("--status <status>", `filter by status, comma-separated (${JOB_STATUSES.join(", ")})`)
    .option("--from <when>", "due at or after this time")
    .option("--to <when>", "due before this time")
    .option("--limit <n>", "page size, 1 to 1000", "50")
    .option("--cursor <cursor>", "continue after a previous page (its next cursor)")
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
}

function printPage(jobs: Row[], nextCursor: string | null, timeZone: string): void {
  if (jobs.length === 0) {
    out("no jobs");
  } else {
    out(
      table(
        ["ID", "STATUS", `DUE (${timeZone})`, "TARGET", "ATTEMPTS"],
        jobs.map((j) => [
          j.id,
          j.status,
          formatInZone(j.dueMs, timeZone),
          j.target,
          attemptsText(j),
        ]),
        ["l", "l", "l", "l", "r"],
      ),
    );
  }
  out(
    nextCursor === null
      ? `(${plural(jobs.length, "job")}, last page)`
      : `(${plural(jobs.length, "job")}) next page: --cursor ${nextCursor}`,
  );
}

function parseStatuses(raw: string): JobStatus[] {
  const list = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const s of list) {
    if (!JOB_STATUSES.includes(s as JobStatus)) {
      throw new InvalidJobError("--status", `one of ${JOB_STATUSES.join(", ")}`, s);
    }
  }
  if (list.length === 0) {
    throw new InvalidJobError("--status", `one of ${JOB_STATUSES.join(", ")}`, raw);
  }
  return list as JobStatus[];
}

/** A range bound as typed: `0` (the epoch) is a fine lower bound, unlike a due time. */
function listTime(value: string, field: string): string | number {
  return cliTime(value, field, { epochZero: true });
}
