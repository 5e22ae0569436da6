import Database from "better-sqlite3";
import { SettingMismatchError } from "../../core/errors.js";
import { MIGRATIONS } from "./migrations.js";
import { SQL } from "./statements.js";

/** Bytes a WAL file is trimmed to when it starts over (twice the checkpointer's restart size). */
const WAL_SIZE_LIMIT = 128 * 1024 * 1024;

/** An open, migrated database and the settings it was created with. */
export interface OpenedDatabase {
  readonly db: Database.Database;
  readonly bucketWidthMs: number;
  readonly shardCount: number;
}

/**
 * Opens (creating if needed) a database file in WAL mode with synchronous=NORMAL (a commit
 * survives a process crash; the last ones may be lost on power loss), applies migrations, and
 * reads or records the settings fixed at creation. Closes the file again if anything fails.
 */
export function openDatabase(o: {
  path: string;
  bucketWidthMs: number | undefined;
  shardCount: number | undefined;
  cacheMiB: number;
  busyTimeoutMs: number;
  /** Leave WAL checkpoints to a Checkpointer (auto-checkpoint off on this connection). */
  checkpointElsewhere: boolean;
}): OpenedDatabase {
  const db = new Database(o.path);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma(`busy_timeout = ${o.busyTimeoutMs}`);
    db.pragma(`cache_size = -${o.cacheMiB * 1024}`);
    db.pragma("temp_store = MEMORY");
    if (o.checkpointElsewhere) db.pragma("wal_autocheckpoint = 0");
    // When the WAL starts over, trim a file that a burst of writes grew past this size.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    migrate(db);
    return {
      db,
      bucketWidthMs: fixedSetting(
        db,
        "bucket_width_ms",
        o.bucketWidthMs,
        3_600_000,
        "bucketWidthMs",
      ),
      shardCount: fixedSetting(db, "shard_count", o.shardCount, 1, "shardCount"),
    };
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Applies pending migrations in one write transaction; idempotent. */
export function migrate(db: Database.Database): void {
  db.transaction(() => {
    const current = db.pragma("user_version", { simple: true }) as number;
    for (let v = current; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
}

/**
 * A setting fixed at creation: recorded on first open (`wanted`, else `dflt`); a later open
 * adopts the stored value, and asking for a different one is refused.
 */
function fixedSetting(
  db: Database.Database,
  name: string,
  wanted: number | undefined,
  dflt: number,
  option: string,
): number {
  const row = db.prepare(SQL.metaGet).get(name) as { value: string } | undefined;
  if (!row) {
    db.prepare(SQL.metaSet).run(name, String(wanted ?? dflt));
    return wanted ?? dflt;
  }
  const stored = Number(row.value);
  if (wanted !== undefined && stored !== wanted) {
    throw new SettingMismatchError(option, stored, wanted, "database");
  }
  return stored;
}
