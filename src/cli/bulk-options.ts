import type { Command } from "commander";
import { InvalidJobError } from "../core/errors.js";
import { JOB_STATUSES } from "../core/job.js";
import { collect } from "./option-values.js";

/**
 * The filter flags of the commands that act on many jobs at once (`cancel`, `reschedule`,
 * `retry`, `erase`): declared here, light, so a command's start-up stays cheap; the bulk
 * run itself (bulk.ts) is loaded only when a filter is given.
 */

/** The flags as commander gives them. */
export interface FilterFlags {
  tag?: string[];
  target?: string;
  status?: string;
  dueFrom?: string;
  dueTo?: string;
  keyPrefix?: string;
  count?: boolean;
  /** The operation's idempotency key (not a selecting flag). */
  operationKey?: string;
}

/** The flags that select jobs (any of them makes the command a bulk operation). */
const SELECTING: readonly (keyof FilterFlags)[] = [
  "tag",
  "target",
  "status",
  "dueFrom",
  "dueTo",
  "keyPrefix",
];

/** Declares the filter flags on a command. */
export function addFilterOptions(cmd: Command): Command {
  return cmd
    .option("--tag <tag>", "bulk: jobs carrying this tag (repeatable: every one)", collect)
    .option("--target <target>", "bulk: jobs with exactly this target")
    .option(
      "--status <status>",
      `bulk: jobs in these states, comma-separated (${JOB_STATUSES.join(", ")})`,
    )
    .option("--due-from <when>", "bulk: jobs due at or after this time")
    .option("--due-to <when>", "bulk: jobs due before this time")
    .option("--key-prefix <prefix>", "bulk: jobs whose idempotency key starts with this")
    .option("--count", "bulk: only count the jobs it would change (a dry run)")
    .option(
      "--operation-key <key>",
      "bulk: idempotency key of the operation: run again, the command follows the operation it started instead of starting another",
    );
}

/** Whether the flags select jobs by filter. */
export function hasFilter(o: FilterFlags): boolean {
  return SELECTING.some((k) => o[k] !== undefined);
}

/**
 * One job (an id or --key) or a filter: exactly one of them. `named` says whether a job was
 * named; the error names the flag or argument to add or remove.
 */
export function requireOneSelection(named: boolean, o: FilterFlags, what: string): boolean {
  const filter = hasFilter(o);
  if (named && filter) {
    const flag = SELECTING.find((k) => o[k] !== undefined)!;
    throw new InvalidJobError(
      `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
      `either ${what} or a filter, not both`,
      flagValue(o[flag]),
    );
  }
  if (!named && !filter) {
    throw new InvalidJobError(
      "id",
      `${what}, or a filter (--tag, --target, --status, --due-from, --due-to, --key-prefix)`,
      undefined,
    );
  }
  if (!filter && o.count === true) {
    throw new InvalidJobError("--count", "a filter to count (--tag, --target, ...)", true);
  }
  if (!filter && o.operationKey !== undefined) {
    throw new InvalidJobError(
      "--operation-key",
      "a filter (the key names a bulk operation, --tag, --target, ...)",
      o.operationKey,
    );
  }
  return filter;
}

function flagValue(v: string | string[] | boolean | undefined): unknown {
  return Array.isArray(v) ? v[0] : v;
}
