import type { Store } from "../../store/store.js";
import { PostgresStore } from "./postgres-store.js";

/**
 * Opens the PostgreSQL store from a URL (`postgres://...` or `postgresql://...`, several
 * hosts allowed: see PostgresStoreOptions.url). A `?schema=name` query parameter picks the
 * schema (default "duetime"). `bucketWidthMs` applies to a new schema; when omitted, an
 * existing schema keeps the width it was created with and a new one gets the PostgreSQL
 * default (one day).
 */
export async function openPostgresStore(
  url: string,
  opts: { bucketWidthMs?: number; schema?: string } = {},
): Promise<Store> {
  return PostgresStore.open({
    url,
    ...(opts.schema === undefined ? {} : { schema: opts.schema }),
    ...(opts.bucketWidthMs === undefined ? {} : { bucketWidthMs: opts.bucketWidthMs }),
  });
}
