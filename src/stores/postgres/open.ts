import type { Store } from "../../store/store.js";
import { PostgresStore } from "./postgres-store.js";

/**
 * Opens the PostgreSQL store from a URL (`postgres://...` or `postgresql://...`). A
 * `?schema=name` query parameter picks the schema (default "duetime"); it is removed before
 * connecting. `bucketWidthMs` applies to a new schema; when omitted, an existing schema keeps
 * the width it was created with and a new one gets the PostgreSQL default (one day).
 */
export async function openPostgresStore(
  url: string,
  opts: { bucketWidthMs?: number; schema?: string } = {},
): Promise<Store> {
  const parsed = new URL(url);
  const schema = opts.schema ?? parsed.searchParams.get("schema") ?? undefined;
  parsed.searchParams.delete("schema");
  return PostgresStore.open({
    url: parsed.toString(),
    ...(schema === undefined ? {} : { schema }),
    ...(opts.bucketWidthMs === undefined ? {} : { bucketWidthMs: opts.bucketWidthMs }),
  });
}
