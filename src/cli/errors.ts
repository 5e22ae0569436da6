import { CommanderError } from "commander";
import { InvalidJobError, InvalidOptionError, describeReceived } from "../core/errors.js";

/**
 * Exit codes of every `duetime` command. Scripts branch on them, so they are part of the
 * CLI's contract (and listed in `duetime --help`).
 */
export const EXIT = Object.freeze({
  /** The command did what was asked (cancelled, rescheduled, fired...). */
  ok: 0,
  /** Something failed that is not the caller's input: database error, bug, lost jobs. */
  failure: 1,
  /** Bad usage or input: unknown option, unparsable time, invalid field. */
  usage: 2,
  /** No job with that id. */
  notFound: 3,
  /** The job exists but its state forbids the action (cancel too late, retry a live job). */
  tooLate: 4,
  /** `--expected-version` did not match the job's current version. */
  versionConflict: 5,
});

export const EXIT_CODES_HELP = `
Exit codes:
  0  done (for cancel: cancelled; reschedule/retry: rescheduled)
  1  failure not caused by the input (database error; demo, bench: a job lost or early)
  2  usage error or invalid input ("error: <field>: expected ..., received ...")
  3  not-found: no job with that id
  4  too-late: the job is claimed or finished (cancel, reschedule) or not dead (retry)
  5  version-conflict: the job changed since --expected-version (retry: key-conflict, another live job holds its key;
     bulk: key-conflict, --operation-key started an operation with another filter or kind)`;

/** Library field names as the CLI user typed them (flags and arguments). */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  dueAt: "when",
  timeZone: "--tz",
  locale: "--locale",
  target: "--target",
  payload: "--payload",
  key: "--key",
  keyMode: "--key-mode",
  maxWaitMs: "--max-wait",
  tenant: "--tenant",
  maxAttempts: "--max-attempts",
  expireAfterMs: "--expire-after",
  expectedVersion: "--expected-version",
  status: "--status",
  dueFrom: "--from",
  dueTo: "--to",
  limit: "--limit",
  cursor: "--cursor",
  // the library's page position (listPauses' after) is the CLI's --cursor
  after: "--cursor",
  id: "id",
  cron: "--cron",
  rrule: "--rrule",
  start: "--start",
  end: "--end",
  count: "--count",
  gap: "--gap",
  overlap: "--overlap",
  misfire: "--misfire",
  onResume: "--on-resume",
  "callbacks.onSuccess": "--on-success",
  "callbacks.onFailure": "--on-failure",
  "callbacks.onDead": "--on-dead",
  "scope.target": "--target",
  "scope.tag": "--tag",
  from: "--from",
  bucketWidthMs: "--granularity",
  bucketGranularity: "--granularity",
  db: "--db",
  path: "--db",
};

/** A bulk operation's filter and parameters (core/operation-input.ts) as their flags. */
const OPERATION_FIELDS: Readonly<Record<string, string>> = {
  "filter.target": "--target",
  "filter.status": "--status",
  "filter.dueFrom": "--due-from",
  "filter.dueTo": "--due-to",
  "filter.keyPrefix": "--key-prefix",
  "filter.tags": "--tag",
  shiftMs: "--shift",
};

function cliField(field: string): string {
  // a tag of a list (`tags[1]`, `filter.tags[0]`), a state of a list: the repeated flag
  const listed = /^((?:filter\.)?tags|filter\.status)\[\d+\]$/.exec(field);
  if (listed) return listed[1] === "filter.status" ? "--status" : "--tag";
  if (field === "tags") return "--tag";
  if (Object.hasOwn(OPERATION_FIELDS, field)) return OPERATION_FIELDS[field]!;
  // own properties only: a field named "constructor" (an unknown field) is itself
  return Object.hasOwn(FIELD_NAMES, field) ? FIELD_NAMES[field]! : field;
}

/**
 * Bad CLI input is reported as the library reports it (InvalidJobError: field, expected,
 * received), so one formatter serves both.
 */
export function usageError(field: string, expected: string, received: unknown): InvalidJobError {
  return new InvalidJobError(field, expected, received);
}

/**
 * Turns any error thrown by a command into one line on stderr and an exit code. User errors
 * never show a stack trace; unexpected ones show it only with DUETIME_DEBUG=1.
 */
export function reportError(err: unknown, write: (line: string) => void): number {
  if (err instanceof CommanderError) {
    // Commander already printed its message (or the help); only the exit code is ours.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof InvalidJobError) {
    write(
      `error: ${cliField(err.field)}: expected ${err.expected}, received ${describeReceived(err.received)}`,
    );
    return EXIT.usage;
  }
  if (err instanceof InvalidOptionError) {
    write(
      `error: ${cliField(err.option)}: expected ${err.expected}, received ${describeReceived(err.received)}`,
    );
    return EXIT.usage;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  const prefix = typeof code === "string" && code.startsWith("SQLITE_") ? `database: ` : "";
  write(`error: ${prefix}${e.message}`);
  // One line at a time: the writer escapes control characters, newlines included.
  if (process.env.DUETIME_DEBUG) for (const line of (e.stack ?? "").split("\n")) write(line);
  return EXIT.failure;
}
