import type pg from "pg";
import { SettingMismatchError } from "../../core/errors.js";
import {
  DEFAULT_BUCKET_WIDTH_MS,
  DEFAULT_SHARD_COUNT,
  type ResolvedPostgresOptions,
} from "./options.js";
import type { Statements } from "./statements.js";

/** Settings fixed when a schema is created (`<schema>.meta`). */
export interface Settings {
  bucketWidthMs: number;
  historyWidthMs: number;
  shardCount: number;
}

/** Settings fixed at creation: recorded on first open, and a different value later is refused. */
export async function fixedSettings(
  pool: pg.Pool,
  sql: Statements,
  o: ResolvedPostgresOptions,
): Promise<Settings> {
  const get = async (
    name: string,
    wanted: number | undefined,
    fallback: number,
    option: string,
  ) => {
    await pool.query(sql.metaInsert, [name, String(wanted ?? fallback)]);
    const { rows } = await pool.query<{ value: string }>(sql.metaGet, [name]);
    const stored = Number(rows[0]?.value);
    if (wanted !== undefined && stored !== wanted) {
      throw new SettingMismatchError(option, stored, wanted, "schema");
    }
    return stored;
  };
  const bucketWidthMs = await get(
    "bucket_width_ms",
    o.bucketWidthMs,
    DEFAULT_BUCKET_WIDTH_MS,
    "bucketWidthMs",
  );
  const historyWidthMs = await get(
    "history_width_ms",
    o.historyWidthMs,
    bucketWidthMs,
    "historyWidthMs",
  );
  const shardCount = await get("shard_count", o.shardCount, DEFAULT_SHARD_COUNT, "shardCount");
  return { bucketWidthMs, historyWidthMs, shardCount };
}
