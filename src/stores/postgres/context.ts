import type pg from "pg";
import type { DueNotifier } from "./due-notifier.js";
import type { Partitions } from "./partitions.js";
import type { Statements } from "./statements.js";

/**
 * What the PostgreSQL store's background loops (shard leases, partition maintenance) need
 * of it: the pool, the schema's statements and its fixed widths. Each loop takes the part
 * it uses instead of the whole store, so the store can build them without an import circle
 * and a test can build one from an open store's `context`.
 */
export interface PostgresContext {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly sql: Statements;
  /** Width of one live partition (bucket), ms. */
  readonly bucketWidthMs: number;
  /** Width of one history partition, ms. */
  readonly historyWidthMs: number;
  readonly shardCount: number;
  /** Partition bookkeeping (its cache is shared with the store's writes). */
  readonly partitions: Partitions;
  /**
   * Opens a session connection (the store's session URL, past any transaction pooler):
   * for what a pooled statement cannot hold, such as the nodes' liveness locks.
   */
  readonly sessionClient: () => pg.Client;
  /** The store's LISTEN connection: due times, and node registry changes. */
  readonly notifier: DueNotifier;
}
