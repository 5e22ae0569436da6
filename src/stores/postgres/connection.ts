import pg from "pg";
import { HostLocator, locatingClient } from "./host-locator.js";
import type { PostgresHost, PostgresLocation } from "./url.js";

/** bigint (int8) columns hold epoch ms and counters: well inside 2^53, so plain numbers. */
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === INT8_OID && format !== "binary") return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

/**
 * Where connections go and how they are made: node-postgres settings for one host, and the
 * Client class that opens them (a HostLocator's when the URL names several hosts).
 */
export interface Connector {
  readonly Client: typeof pg.Client;
  /** Settings for a connection; `statementTimeoutMs` null sends no session options. */
  config(statementTimeoutMs: number | null): pg.ClientConfig;
}

/** A connector to `hosts` (the URL's, or its session hosts) of a parsed connection string. */
export function connectorFor(
  location: PostgresLocation,
  hosts: readonly PostgresHost[],
): Connector {
  const first = hosts[0];
  const base = (host: PostgresHost | undefined): pg.ClientConfig => ({
    connectionString: location.connectionString(host ?? null),
    application_name: "duetime",
    types,
    ...(location.connectTimeoutMs === null
      ? {}
      : { connectionTimeoutMillis: location.connectTimeoutMs }),
  });
  const withOptions = (config: pg.ClientConfig, statementTimeoutMs: number | null) =>
    statementTimeoutMs === null
      ? config
      : {
          ...config,
          // Custom plans always: a generic plan of a partitioned table locks every partition.
          options: `-c plan_cache_mode=force_custom_plan -c statement_timeout=${statementTimeoutMs}`,
        };
  if (hosts.length <= 1) {
    return { Client: pg.Client, config: (t) => withOptions(base(first), t) };
  }
  const locator = new HostLocator(
    hosts,
    location.targetSessionAttrs === "read-write",
    base,
    location.connectTimeoutMs ?? undefined,
  );
  return { Client: locatingClient(locator), config: (t) => withOptions(base(first), t) };
}

/**
 * Connections an idle pool keeps open. node-postgres closes an idle client after 10 s, and
 * an idle node's loops run further apart than that (heartbeat 30 s, the others 60 s): each
 * statement then opened a new connection, and every connection's start-up is a transaction
 * of its own on the server, doubling an idle node's count. Two, because two loops sometimes
 * run at once; the pool still shrinks to them after a burst.
 */
const IDLE_CONNECTIONS = 2;

export function createPool(
  connector: Connector,
  size: number,
  statementTimeoutMs: number | null,
  onError: (e: Error) => void,
): pg.Pool {
  const pool = new pg.Pool({
    ...connector.config(statementTimeoutMs),
    max: size,
    min: Math.min(IDLE_CONNECTIONS, size),
    Client: connector.Client,
  });
  // An idle client losing its connection (server restart) must not crash the process: the
  // pool drops it and the next query opens a new one.
  pool.on("error", (err) =>
    onError(new Error("idle PostgreSQL connection failed", { cause: err })),
  );
  ignoreCheckedOutErrors(pool);
  return pool;
}

/**
 * A checked-out client (a transaction, a migration) whose connection drops emits `error`
 * besides failing its query, and the pool listens only while the client is idle: without a
 * listener of its own, a server stopping mid-transaction would crash the process. The failed
 * query reports the trouble to its caller; this listener only keeps the process alive.
 */
export function ignoreCheckedOutErrors(pool: pg.Pool): void {
  pool.on("connect", (client) => client.on("error", () => undefined));
}

/** Errors worth retrying the same statement for: deadlock, serialization failure. */
export function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "40P01" || code === "40001";
}

/** Runs `fn` in a transaction on one pooled client; rolls back on error. */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const out = await fn(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Retries `fn` on deadlocks and serialization failures (a few times, short pauses). */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || !isRetryable(err)) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 10));
    }
  }
}
