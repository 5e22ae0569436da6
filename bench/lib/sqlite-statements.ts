import Database from "better-sqlite3";

/**
 * Counts the SQLite statements this process runs through better-sqlite3 from now on: each
 * prepared statement's run, get, all and iterate, and each exec and pragma call. The BEGIN
 * and COMMIT a `db.transaction()` function issues run inside the driver and are not
 * counted. Wraps the driver's prototypes, so every connection of the process counts.
 */
export function countSqliteStatements(): { read: () => number } {
  let n = 0;
  const probe = new Database(":memory:");
  const statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, unknown>;
  probe.close();
  const wrap = (proto: Record<string, unknown>, names: readonly string[]): void => {
    for (const name of names) {
      const original = proto[name] as (...a: unknown[]) => unknown;
      proto[name] = function (this: unknown, ...a: unknown[]) {
        n++;
        return original.apply(this, a);
      };
    }
  };
  wrap(statement, ["run", "get", "all", "iterate"]);
  wrap(Database.prototype as unknown as Record<string, unknown>, ["exec", "pragma"]);
  return { read: () => n };
}
