import type { Command } from "commander";
import { existsSync } from "node:fs";
// Not the index barrel: it loads the PostgreSQL store (and pg) for every command.
import type { Scheduler } from "../api/scheduler.js";
import type { BucketGranularity } from "../core/buckets.js";
import type { CreateSchedulerOptions } from "../create-scheduler.js";
import { describeDbLocation, parseDbLocation } from "../core/db-location.js";
import { InvalidJobError, InvalidOptionError } from "../core/errors.js";
import { assertTimeZone } from "../core/time-input.js";
import { escapeControls, systemTimeZone } from "./format.js";

/** Options every command accepts (declared once on the program, usable after the command). */
export interface GlobalOptions {
  /** SQLite file path, or a postgres:// URL. */
  readonly db?: string;
  /** Bucket granularity for a new database. */
  readonly granularity?: string;
}

/** Default database location: DUETIME_DB, else ./duetime.db. */
export function resolveDb(opts: GlobalOptions): string {
  return opts.db ?? (process.env.DUETIME_DB || "./duetime.db");
}

/**
 * Opens the scheduler on the command's database, runs `fn`, and always closes it. One short
 * operation: no checkpoint worker (starting one costs 30 ms; SQLite's own auto-checkpoint
 * does for a write or two).
 */
export async function withScheduler<T>(
  cmd: Command,
  fn: (scheduler: Scheduler) => Promise<T>,
  extra: Omit<CreateSchedulerOptions, "db"> = {},
  db?: string,
): Promise<T> {
  const scheduler = await openScheduler(cmd, { backgroundCheckpoints: false, ...extra }, db);
  try {
    return await fn(scheduler);
  } finally {
    await scheduler.close();
  }
}

/**
 * withScheduler for commands that act on stored jobs (list, show, stats, cancel, reschedule,
 * retry): a SQLite file that does not exist is a mistyped --db, refused rather than created
 * empty (which would answer "no jobs" or not-found).
 */
export async function withExistingScheduler<T>(
  cmd: Command,
  fn: (scheduler: Scheduler) => Promise<T>,
): Promise<T> {
  const g = cmd.optsWithGlobals<GlobalOptions>();
  const db = resolveDb(g);
  const where = parseDbLocation(db, "--db");
  if (where.kind === "sqlite" && where.file !== null && !existsSync(where.file)) {
    // Name where the path came from: the flag, the variable, or the default.
    const source =
      g.db !== undefined ? "--db" : process.env.DUETIME_DB ? "DUETIME_DB" : "--db (default)";
    throw new InvalidJobError(
      source,
      `an existing database file (${cmd.name()} does not create one; add does)`,
      db,
    );
  }
  return withScheduler(cmd, fn);
}

export async function openScheduler(
  cmd: Command,
  extra: Omit<CreateSchedulerOptions, "db"> = {},
  db?: string,
): Promise<Scheduler> {
  const g = cmd.optsWithGlobals<GlobalOptions>();
  const path = db ?? resolveDb(g);
  if (g.granularity !== undefined && !isGranularity(g.granularity)) {
    throw new InvalidJobError("--granularity", '"minute", "hour" or "day"', g.granularity);
  }
  // Without --granularity a new database gets the store's default and an existing one
  // keeps the width it was created with.
  // Loaded here, not at the top: the scheduler, its store and better-sqlite3 are most of what
  // a command loads, and --version, --help and the --url commands never open a database.
  const { createScheduler } = await import("../create-scheduler.js");
  try {
    return await createScheduler({
      db: path,
      ...(g.granularity === undefined ? {} : { bucketGranularity: g.granularity }),
      ...extra,
    });
  } catch (err) {
    if (err instanceof InvalidOptionError || err instanceof InvalidJobError) throw err;
    throw new Error(`opening database ${describeDbLocation(path)}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

function isGranularity(g: string): g is BucketGranularity {
  return g === "minute" || g === "hour" || g === "day";
}

/** Epoch ms below this (1973-03-03) are read as a mistake: most likely epoch seconds. */
const EARLIEST_EPOCH_MS = 100_000_000_000;

/**
 * A time as typed on the command line: digits are epoch milliseconds (a number for the
 * parser), anything else goes to the parser as text. Digits that would be a time before
 * 1973 are refused: epoch seconds, read as ms, are a time in 1970. `epochZero` lets `0`
 * through, the epoch itself (`list --from 0`).
 */
export function cliTime(
  value: string,
  field: string,
  opts: { epochZero?: boolean } = {},
): string | number {
  const text = value.trim();
  if (!/^\d+$/.test(text)) return value;
  const n = Number(text);
  if (n < EARLIEST_EPOCH_MS && !(n === 0 && opts.epochZero === true)) {
    const seconds = n * 1000 >= EARLIEST_EPOCH_MS ? `; epoch seconds? then ${text}000` : "";
    throw new InvalidJobError(
      field,
      `epoch milliseconds from 1973 on (${text} is ${new Date(n).toISOString()}${seconds})`,
      value,
    );
  }
  return n;
}

/** The IANA zone for reading and showing wall-clock times: --tz, else the system's. */
export function resolveTimeZone(tz: string | undefined, flag = "--tz"): string {
  const zone = tz ?? systemTimeZone();
  assertTimeZone(zone, flag);
  return zone;
}

/**
 * `--time-zone` of the long-running commands (serve, mcp): the scheduler's `timeZone`, in
 * which a request's wall time or words are read when it names no zone. UTC unless given (a
 * service answers clients anywhere, unlike a person at a terminal).
 */
export function serviceTimeZone(flag: string | undefined): { timeZone?: string } {
  if (flag === undefined) return {};
  assertTimeZone(flag, "--time-zone");
  return { timeZone: flag };
}

/**
 * Writes text to stdout, one line or several: every human-readable line of every command
 * goes through here, so control characters in any value it carries are escaped (the
 * newlines of the text itself kept); see escapeControls.
 */
export function out(text: string): void {
  process.stdout.write(`${escapeControls(text, "\n")}\n`);
}

/** Writes a value as JSON on one line (machine output). */
export function outJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Parses an integer flag, or throws a usage error naming it. */
export function parseIntFlag(
  raw: string | undefined,
  field: string,
  min: number,
  max: number,
): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidJobError(field, `an integer from ${min} to ${max}`, raw);
  }
  return n;
}

/**
 * Wraps a command's action: its resolved number becomes the process exit code. The code is
 * set rather than calling process.exit so stdout is flushed before the process ends.
 */
export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<number>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    process.exitCode = await fn(...args);
  };
}
