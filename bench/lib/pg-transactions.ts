/**
 * Counts the transactions this process's node-postgres clients make the server run, at
 * the source, so a benchmark can tell a node's own from the rest of `pg_stat_database`'s
 * count (autovacuum's workers, other sessions, the benchmark's own reads). What the
 * server counts as a transaction:
 *
 * - every connection's start-up (the backend reads the catalog in one);
 * - every statement sent outside BEGIN ... COMMIT/ROLLBACK (one implicit transaction);
 * - every BEGIN ... COMMIT/ROLLBACK block, however many statements it holds.
 *
 * It wraps `pg.Client.prototype` (every pool's and every dedicated connection's class,
 * the multi-host locator's subclass included) while installed; clients passed to
 * `exclude` are not counted.
 */
import pg from "pg";

export interface TransactionCount {
  readonly connections: number;
  readonly statements: number;
  readonly transactions: number;
}

export interface TransactionCounter {
  /** Counts so far. */
  read(): TransactionCount;
  /** Statements so far by their first 60 characters, schema names left out. */
  byStatement(): Map<string, number>;
  /** A client whose work is not counted (the benchmark's own). */
  exclude(client: pg.Client): void;
  /** Restores the client's methods. */
  uninstall(): void;
}

const OPENS = /^\s*(?:BEGIN|START\s+TRANSACTION)\b/i;
const CLOSES = /^\s*(?:COMMIT|ROLLBACK|END|ABORT)\b/i;

export function countTransactions(): TransactionCounter {
  const proto = pg.Client.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const connect = proto.connect!;
  const query = proto.query!;
  const excluded = new WeakSet<object>();
  const inBlock = new WeakSet<object>();
  let connections = 0;
  let statements = 0;
  let transactions = 0;
  const texts = new Map<string, number>();
  proto.connect = function (this: object, ...args: unknown[]) {
    if (!excluded.has(this)) {
      connections++;
      transactions++;
    }
    return connect.apply(this, args);
  };
  proto.query = function (this: object, ...args: unknown[]) {
    if (!excluded.has(this)) {
      const config = args[0];
      const text =
        typeof config === "string" ? config : ((config as { text?: string } | null)?.text ?? "");
      statements++;
      const label = text
        .replace(/\s+/g, " ")
        .replace(/"[^"]+"\./g, "")
        .trim()
        .slice(0, 60);
      texts.set(label, (texts.get(label) ?? 0) + 1);
      if (OPENS.test(text)) {
        inBlock.add(this);
        transactions++;
      } else if (CLOSES.test(text)) {
        inBlock.delete(this);
      } else if (!inBlock.has(this)) {
        transactions++;
      }
    }
    return query.apply(this, args);
  };
  return {
    read: () => ({ connections, statements, transactions }),
    byStatement: () => new Map(texts),
    exclude: (client) => excluded.add(client),
    uninstall() {
      proto.connect = connect;
      proto.query = query;
    },
  };
}
