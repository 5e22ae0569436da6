import { parseDbLocation } from "../core/db-location.js";
import { InvalidOptionError, SettingMismatchError } from "../core/errors.js";
import type { Store } from "../store/store.js";
import { SqliteStore } from "./sqlite/sqlite-store.js";
import type { SqliteKeyStore } from "./sqlite/key-store.js";
import type { PostgresKeyStore } from "./postgres/key-store.js";
import { GRANULARITY_MS, parseGranularity, type BucketGranularity } from "../core/buckets.js";

/**
 * The store contract, for the composition roots that open a store here and wrap it before
 * handing it to a Scheduler (the service's metrics and storage-health proxies).
 */
export type { Store };

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

/**
 * Opens a store from one string: a file path (or `sqlite:path`, `file:path`, `:memory:`)
 * for the embedded SQLite store, or a `postgres://` / `postgresql://` URL.
 */
export async function openStore(db: string, options: OpenStoreOptions = {}): Promise<Store> {
  const where = parseDbLocation(db);
  const bucketWidthMs =
    options.bucketGranularity === undefined
      ? undefined
      : GRANULARITY_MS[parseGranularity(options.bucketGranularity)];
  try {
    if (where.kind === "postgres") {
      const { openPostgresStore } = await import("./postgres/open.js");
      return await openPostgresStore(
        where.url,
        bucketWidthMs === undefined ? {} : { bucketWidthMs },
      );
    }
    return new SqliteStore({
      path: where.path,
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

/**
 * Opens the key store (API keys, tenant secrets) of the database `db` names, beside its jobs.
 * The HTTP service's KeyStore interface is met structurally (a store never imports the
 * service).
 */
export async function openKeyStore(db: string): Promise<PostgresKeyStore | SqliteKeyStore> {
  const where = parseDbLocation(db);
  if (where.kind === "postgres") {
    const { PostgresKeyStore } = await import("./postgres/key-store.js");
    return PostgresKeyStore.open(where.url);
  }
  const { SqliteKeyStore } = await import("./sqlite/key-store.js");
  return new SqliteKeyStore({ path: where.path });
}

/** The granularity name of a bucket width, if it has one. */
function granularityOf(widthMs: number): BucketGranularity | undefined {
  return (Object.keys(GRANULARITY_MS) as BucketGranularity[]).find(
    (g) => GRANULARITY_MS[g] === widthMs,
  );
}
