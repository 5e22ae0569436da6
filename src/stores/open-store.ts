import { InvalidOptionError, SettingMismatchError } from "../core/errors.js";
import type { Store } from "../store/store.js";
import { SqliteStore } from "./sqlite/sqlite-store.js";
import { GRANULARITY_MS, parseGranularity, type BucketGranularity } from "../core/buckets.js";

/** Options common to every store, given with the database location. */
export interface OpenStoreOptions {
  /**
   * Bucket granularity for a new database (default: hour for SQLite). An existing database
   * keeps its own; asking for another one is refused.
   */
  readonly bucketGranularity?: BucketGranularity;
  /**
   * SQLite: run WAL checkpoints on a worker thread (default true for a file). A short-lived
   * process that writes a job or two (a CLI command) is quicker without one. Ignored by
   * PostgreSQL.
   */
  readonly backgroundCheckpoints?: boolean;
  /**
   * SQLite: bytes of the emergency reserve kept beside the file, released when the disk
   * fills up so jobs keep firing (SqliteStoreOptions.ballastBytes). Default 0 (none);
   * `duetime serve` keeps 16 MiB. Ignored by PostgreSQL.
   */
  readonly ballastBytes?: number;
}

/** Whether `db` names a PostgreSQL database (a postgres:// or postgresql:// URL). */
function isPostgresUrl(db: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(db);
}

/** The SQLite path a `db` string names (`sqlite:` and `file:` prefixes removed). */
function sqlitePathOf(db: string): string {
  return db.replace(/^(sqlite|file):(\/\/)?/i, "");
}

/** The file a `db` string names, or null when it names none (a PostgreSQL URL, `:memory:`). */
export function sqliteFileOf(db: string): string | null {
  if (isPostgresUrl(db)) return null;
  const path = sqlitePathOf(db);
  return path === ":memory:" ? null : path;
}

/**
 * Opens a store from one string: a file path (or `sqlite:path`, `file:path`, `:memory:`)
 * for the embedded SQLite store, or a `postgres://` / `postgresql://` URL.
 */
export async function openStore(db: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (typeof db !== "string" || db.trim() === "") {
    throw new InvalidOptionError("db", "a SQLite file path or a postgres:// URL", db);
  }
  const bucketWidthMs =
    options.bucketGranularity === undefined
      ? undefined
      : GRANULARITY_MS[parseGranularity(options.bucketGranularity)];
  try {
    if (isPostgresUrl(db)) {
      const { openPostgresStore } = await import("./postgres/open.js");
      return await openPostgresStore(db, bucketWidthMs === undefined ? {} : { bucketWidthMs });
    }
    return new SqliteStore({
      path: sqlitePathOf(db),
      ...(bucketWidthMs === undefined ? {} : { bucketWidthMs }),
      ...(options.backgroundCheckpoints === undefined
        ? {}
        : { backgroundCheckpoints: options.backgroundCheckpoints }),
      ...(options.ballastBytes === undefined ? {} : { ballastBytes: options.ballastBytes }),
    });
  } catch (err) {
    // The caller asked for a granularity, not a width in ms: answer in its terms.
    if (err instanceof SettingMismatchError && err.option === "bucketWidthMs") {
      const stored = granularityOf(err.stored);
      throw new InvalidOptionError(
        "bucketGranularity",
        `${stored === undefined ? `${err.stored} ms buckets` : `"${stored}"`} (the granularity this ${err.what} was created with)`,
        options.bucketGranularity,
        { cause: err },
      );
    }
    throw err;
  }
}

/** The granularity name of a bucket width, if it has one. */
function granularityOf(widthMs: number): BucketGranularity | undefined {
  return (Object.keys(GRANULARITY_MS) as BucketGranularity[]).find(
    (g) => GRANULARITY_MS[g] === widthMs,
  );
}
