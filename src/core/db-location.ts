import { InvalidOptionError } from "./errors.js";

/**
 * Where a database is, read from the one string every surface takes (`--db`, `DUETIME_DB`,
 * `createScheduler({ db })`, `startService({ db })`): a SQLite file path (or `sqlite:path`,
 * `file:path`, `:memory:`), or a `postgres://` / `postgresql://` connection string. The one
 * place that tells them apart: the job store, the key store, the CLI's checks and the logs
 * all read a location through it (the connection string's own parts are read by the
 * PostgreSQL store's parser, src/stores/postgres/url.ts).
 */
export type DbLocation = SqliteLocation | PostgresLocation;

export interface SqliteLocation {
  readonly kind: "sqlite";
  /** The path as SQLite opens it (prefixes removed), `:memory:` included. */
  readonly path: string;
  /** The file it names, or null for `:memory:`. */
  readonly file: string | null;
}

export interface PostgresLocation {
  readonly kind: "postgres";
  /**
   * The connection string as given. Its parts (several hosts, `?schema=`, the pooler
   * parameters) are the PostgreSQL store's to read: src/stores/postgres/url.ts.
   */
  readonly url: string;
}

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;
const EXPECTED = "a SQLite file path or a postgres:// URL";

/** Whether `db` names a PostgreSQL database (a postgres:// or postgresql:// URL). */
export function isPostgresUrl(db: string): boolean {
  return POSTGRES_URL.test(db);
}

/** Reads a database location; a blank one is refused. */
export function parseDbLocation(db: unknown, option = "db"): DbLocation {
  if (typeof db !== "string" || db.trim() === "") {
    throw new InvalidOptionError(option, EXPECTED, db);
  }
  if (isPostgresUrl(db)) return { kind: "postgres", url: db };
  const path = db.replace(/^(?:sqlite|file):(?:\/\/)?/i, "");
  return { kind: "sqlite", path, file: path === ":memory:" ? null : path };
}

/** A location as logs and messages show it: a PostgreSQL URL with its password hidden. */
export function describeDbLocation(db: string): string {
  return db.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
}
