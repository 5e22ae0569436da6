import type { Store } from "../../store/store.js";
import { InvalidOptionError } from "../../core/errors.js";

/** Placeholder until the PostgreSQL store lands: refuses clearly instead of failing later. */
export async function openPostgresStore(
  url: string,
  _opts: { bucketWidthMs: number },
): Promise<Store> {
  throw new InvalidOptionError("db", "a SQLite path (the PostgreSQL store is not built yet)", url);
}
