import type { Operation } from "./operation.js";

/** Base class of every error duetime throws on purpose. */
export class DuetimeError extends Error {
  override readonly name: string = "DuetimeError";
}

/**
 * A change feed cursor older than what is kept: changes after it were removed by retention,
 * so reading on from it would skip them. Start again from `oldest` (reload the view first).
 */
export class ChangeCursorExpiredError extends DuetimeError {
  override readonly name = "ChangeCursorExpiredError";
  constructor(
    readonly cursor: string,
    /** The cursor to read on from: every change after it is still kept. */
    readonly oldest: string,
  ) {
    super(
      `after: changes after cursor ${cursor} were removed by retention (kept: after ${oldest})`,
    );
  }
}

/**
 * Bad input. `field` names the offending field (dotted path), `expected` says what was
 * wanted and `received` shows what came in, so the same error reads well in the library,
 * the HTTP API, the MCP tools and the CLI.
 */
export class InvalidJobError extends DuetimeError {
  override readonly name: string = "InvalidJobError";
  readonly field: string;
  constructor(
    field: string,
    readonly expected: string,
    readonly received: unknown,
  ) {
    const label = fieldLabel(field);
    super(`${label}: expected ${expected}, received ${describeReceived(received)}`);
    this.field = label;
  }
}

/** One bad item of a list: its position and its error (field names carry the position too). */
export interface InvalidItem {
  readonly index: number;
  readonly error: InvalidJobError;
}

/**
 * Several jobs of one call are invalid and nothing was stored. It reads as the first bad
 * item's InvalidJobError (`field` is `jobs[3].dueAt`), and `items` lists every bad item in
 * order, so a caller can report all of them at once.
 */
export class InvalidJobsError extends InvalidJobError {
  override readonly name = "InvalidJobsError";
  constructor(
    readonly items: readonly InvalidItem[],
    /** How many jobs the call asked for. */
    readonly total: number,
  ) {
    const first = items[0]!.error;
    super(first.field, first.expected, first.received);
    // the first error's label as it is: labelling an already quoted name again would quote it twice
    (this as { field: string }).field = first.field;
    this.message =
      items.length === 1
        ? first.message
        : `${first.message} (${items.length} of ${total} jobs are invalid; nothing was stored)`;
  }
}

/** Longest field name an error repeats: a name is the caller's text too. */
const MAX_FIELD_LABEL = 100;

/**
 * A name that reads unambiguously before ": expected", alone or in a list: not empty, no
 * colon, comma, quote or control character, no space at either end (`jobs[3].dueAt`,
 * `headers.a b`).
 */
const PLAIN_FIELD = /^[^\s:,"\p{Cc}](?:[^:,"\p{Cc}]*[^\s:,"\p{Cc}])?$/u;

/**
 * A field name as errors show it. Names can come from the caller (an unknown body field,
 * query parameter or tool argument): one that would not read as a name is quoted as JSON
 * (`""`, `":"`, `" x"`), and a long one is cut, and quoted, instead of echoed whole.
 */
export function fieldLabel(field: string): string {
  if (field.length <= MAX_FIELD_LABEL && PLAIN_FIELD.test(field)) return field;
  const cut =
    field.length <= MAX_FIELD_LABEL
      ? field
      : `${field.slice(0, MAX_FIELD_LABEL)}... (${field.length} characters)`;
  return JSON.stringify(cut);
}

export class JobNotFoundError extends DuetimeError {
  override readonly name = "JobNotFoundError";
  constructor(readonly id: string) {
    super(`job ${id} not found`);
  }
}

/** No recurring series with this id (for this tenant). */
export class ScheduleNotFoundError extends DuetimeError {
  override readonly name = "ScheduleNotFoundError";
  constructor(readonly id: string) {
    super(`schedule ${id} not found`);
  }
}

/** No bulk operation with this id (for this tenant). */
export class OperationNotFoundError extends DuetimeError {
  override readonly name = "OperationNotFoundError";
  constructor(readonly id: string) {
    super(`operation ${id} not found`);
  }
}

/**
 * An operation was started with an idempotency key that one of the tenant's operations
 * already holds, for a different request (another kind, filter or parameters). Nothing was
 * started; `held` is the operation holding the key.
 */
export class OperationKeyConflictError extends DuetimeError {
  override readonly name = "OperationKeyConflictError";
  constructor(
    readonly key: string,
    readonly held: Operation,
  ) {
    super(
      `key ${JSON.stringify(key)} started operation ${held.id} (${held.kind}) with another filter or parameters`,
    );
  }
}

/** The job changed since the version the caller read (optimistic concurrency). */
export class VersionConflictError extends DuetimeError {
  override readonly name = "VersionConflictError";
  constructor(
    readonly id: string,
    readonly expectedVersion: number,
    readonly actualVersion: number,
  ) {
    super(`job ${id} is at version ${actualVersion}, expected ${expectedVersion}`);
  }
}

/** The job is no longer pending: it is firing or has finished. */
export class JobNotPendingError extends DuetimeError {
  override readonly name = "JobNotPendingError";
  constructor(
    readonly id: string,
    readonly status: string,
  ) {
    super(`job ${id} is ${status}, not pending`);
  }
}

/**
 * A tenant is over one of its quotas: too many live jobs, creating faster than its rate, or
 * too many open pauses (the scheduler's maxOpenPauses). Nothing was written. `retryAfterMs` says when asking again may succeed.
 */
export class QuotaExceededError extends DuetimeError {
  override readonly name = "QuotaExceededError";
  constructor(
    readonly tenant: string,
    readonly quota: "liveJobs" | "createsPerSecond" | "openPauses",
    /** What the quota allows, in words ("at most 1000 live jobs"). */
    readonly expected: string,
    /** What the request would have made it, in words. */
    readonly received: string,
    readonly retryAfterMs: number,
  ) {
    super(`tenant ${JSON.stringify(tenant)} quota: expected ${expected}, received ${received}`);
  }
}

/** Options given to a component are invalid. */
export class InvalidOptionError extends DuetimeError {
  override readonly name = "InvalidOptionError";
  constructor(
    readonly option: string,
    readonly expected: string,
    readonly received: unknown,
    options?: ErrorOptions,
  ) {
    super(
      `option ${option}: expected ${expected}, received ${describeReceived(received)}`,
      options,
    );
  }
}

/**
 * A setting fixed when a database was created (its bucket width, its shard count), asked
 * for with another value. `stored` is the database's own.
 */
export class SettingMismatchError extends InvalidOptionError {
  constructor(
    option: string,
    readonly stored: number,
    received: number,
    readonly what: "database" | "schema",
  ) {
    super(option, `${stored} (the value this ${what} was created with)`, received);
  }
}

/**
 * A write failed because the store's storage is full (SQLite's SQLITE_FULL, PostgreSQL's
 * 53100 disk_full). Every write is one transaction, so nothing of it was kept; the same
 * write succeeds again once space is freed. `operation` says what was being written. The
 * service answers it 507 and reports not-ready until a write succeeds again.
 */
export class StorageFullError extends DuetimeError {
  override readonly name = "StorageFullError";
  constructor(
    readonly operation: string,
    options?: ErrorOptions,
  ) {
    super(`storage is full: ${operation} failed and nothing of it was written`, options);
  }
}

/**
 * `stop()` (and `close()`) could not record `count` job outcomes before its timeout: the
 * store stayed unavailable. Nothing is lost: those jobs stay claimed until their leases run
 * out (or this node name starts again), then fire again (at-least-once). `cause` is the
 * store's last error.
 */
export class OutcomesNotRecordedError extends DuetimeError {
  override readonly name = "OutcomesNotRecordedError";
  constructor(
    readonly count: number,
    options?: ErrorOptions,
  ) {
    super(
      `${count} job outcome${count === 1 ? "" : "s"} could not be recorded before the stop timeout (the store is unavailable); their jobs come back when their leases run out`,
      options,
    );
  }
}

/**
 * The StorageFullError in `err` or its chain of causes (callers wrap errors to add context),
 * or null.
 */
export function storageFullIn(err: unknown): StorageFullError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof StorageFullError) return e;
  }
  return null;
}

/** A received value already described in words ("202 bytes"), shown without quotes. */
export class Described {
  constructor(readonly text: string) {}
}

export function describeReceived(value: unknown): string {
  if (value instanceof Described) return value.text;
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "string") {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === "object") return "an object";
  return typeof value;
}
