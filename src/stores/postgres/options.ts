import { InvalidOptionError } from "../../core/errors.js";
import { parsePostgresUrl, type PostgresHost, type PostgresLocation } from "./url.js";

/** Options of the PostgreSQL store. */
export interface PostgresStoreOptions {
  /**
   * Connection URL (`postgres://user:pass@host:port/db`). Required. Several hosts may be
   * given as libpq takes them (`postgres://h1:5432,h2:5433/db?target_session_attrs=read-write`):
   * every connection goes to the first host that qualifies, and after a failover to the
   * next one (host-locator.ts). `?pooler=transaction` says the URL is a pooler in
   * transaction mode (pgbouncer): then `sessionUrl` or `?session_hosts=` is required.
   */
  readonly url: string;
  /**
   * Where the session connection goes (LISTEN, which a transaction pooler cannot carry):
   * a direct URL to the database, several hosts allowed. Default: `url` with the hosts of
   * its `?session_hosts=` parameter, else `url` itself.
   */
  readonly sessionUrl?: string;
  /**
   * Schema holding duetime's tables, created if missing. Several independent duetime
   * deployments (or tests) can share one database with different schemas. Default "duetime".
   */
  readonly schema?: string;
  /**
   * Bucket width in ms, fixed when the schema is created: one live partition per bucket.
   * Default 86,400,000 (one day; see docs/operations-postgres.md for why). When omitted for
   * an existing schema, the width it was created with is used.
   */
  readonly bucketWidthMs?: number;
  /**
   * Width in ms of one history partition (jobs by finish time), fixed at creation. Retention
   * drops whole partitions, so this is the granularity of retention. Default: the bucket width.
   */
  readonly historyWidthMs?: number;
  /** Number of shards job ids hash into, fixed at creation. Default 64. */
  readonly shardCount?: number;
  /** Connections in the pool. Default 10. */
  readonly poolSize?: number;
  /**
   * How far ahead of `now` a write creates a missing live partition on demand, in ms; jobs
   * due later land in the default partition until partition maintenance reaches them.
   * Default 400 buckets.
   */
  readonly onDemandAheadMs?: number;
  /**
   * How far behind `now` a write creates a missing live partition, in ms (older overdue
   * jobs land in the default partition, which the claim reads by index). Default 2 buckets.
   */
  readonly onDemandBehindMs?: number;
  /**
   * A write whose earliest job is due within this many ms of `now` notifies other nodes
   * (LISTEN/NOTIFY). Must be at least the engine's maximum idle wait: later jobs are found
   * by that wake-up anyway. Default 60,000.
   */
  readonly notifyWithinMs?: number;
  /** Statement timeout for every query, in ms (0: none). Default 30,000. */
  readonly statementTimeoutMs?: number;
  /** Lock timeout for partition DDL, in ms: DDL gives way to traffic. Default 2,000. */
  readonly ddlLockTimeoutMs?: number;
  /**
   * Pause between a firing node's shard-lease heartbeats, in ms (see ShardLeasesOptions).
   * A dead node is found by its liveness lock at once, not by heartbeats; they bound only
   * a node whose session lingers (its shards wait about 4 heartbeats). Default 30,000.
   */
  readonly shardHeartbeatMs?: number;
  /** Pause between a firing node's partition maintenance passes, in ms. Default 60,000. */
  readonly maintenanceIntervalMs?: number;
  /** Called with errors of the background LISTEN connection (it reconnects by itself). */
  readonly onError?: (error: Error) => void;
}

export interface ResolvedPostgresOptions {
  readonly url: string;
  readonly location: PostgresLocation;
  /** The session connection's location and hosts (LISTEN). */
  readonly session: {
    readonly location: PostgresLocation;
    readonly hosts: readonly PostgresHost[];
  };
  readonly schema: string;
  readonly bucketWidthMs: number | undefined;
  readonly historyWidthMs: number | undefined;
  readonly shardCount: number | undefined;
  readonly poolSize: number;
  readonly onDemandAheadMs: number | undefined;
  readonly onDemandBehindMs: number | undefined;
  readonly notifyWithinMs: number;
  readonly statementTimeoutMs: number;
  readonly ddlLockTimeoutMs: number;
  readonly shardHeartbeatMs: number | undefined;
  readonly maintenanceIntervalMs: number | undefined;
  readonly onError: (error: Error) => void;
}

export const DEFAULT_BUCKET_WIDTH_MS = 86_400_000;
export const DEFAULT_SHARD_COUNT = 64;

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Validates once and resolves defaults into a new frozen object; the input is not touched. */
export function resolvePostgresOptions(o: PostgresStoreOptions): ResolvedPostgresOptions {
  const location = parsePostgresUrl(o.url, "url");
  const session = sessionOf(location, o.sessionUrl);
  const schema = o.schema ?? location.schema ?? "duetime";
  if (typeof schema !== "string" || !SCHEMA_RE.test(schema)) {
    throw new InvalidOptionError(
      "schema",
      "a lower-case SQL identifier ([a-z_][a-z0-9_]*)",
      schema,
    );
  }
  const optInt = (name: string, v: number | undefined, min: number, max: number) => {
    if (v === undefined) return undefined;
    if (!Number.isSafeInteger(v) || v < min || v > max) {
      throw new InvalidOptionError(name, `an integer from ${min} to ${max}`, v);
    }
    return v;
  };
  const day = 86_400_000;
  return Object.freeze({
    url: o.url,
    location,
    session,
    schema,
    bucketWidthMs: optInt("bucketWidthMs", o.bucketWidthMs, 1000, 366 * day),
    historyWidthMs: optInt("historyWidthMs", o.historyWidthMs, 1000, 366 * day),
    shardCount: optInt("shardCount", o.shardCount, 1, 4096),
    poolSize: optInt("poolSize", o.poolSize, 1, 1000) ?? 10,
    onDemandAheadMs: optInt("onDemandAheadMs", o.onDemandAheadMs, 0, 100 * 366 * day),
    onDemandBehindMs: optInt("onDemandBehindMs", o.onDemandBehindMs, 0, 100 * 366 * day),
    notifyWithinMs: optInt("notifyWithinMs", o.notifyWithinMs, 0, 366 * day) ?? 60_000,
    statementTimeoutMs: optInt("statementTimeoutMs", o.statementTimeoutMs, 0, 3_600_000) ?? 30_000,
    ddlLockTimeoutMs: optInt("ddlLockTimeoutMs", o.ddlLockTimeoutMs, 1, 600_000) ?? 2_000,
    shardHeartbeatMs: optInt("shardHeartbeatMs", o.shardHeartbeatMs, 10, 3_600_000),
    maintenanceIntervalMs: optInt("maintenanceIntervalMs", o.maintenanceIntervalMs, 10, 366 * day),
    onError: o.onError ?? (() => {}),
  });
}

/** `"schema"."name"`, for identifiers already validated by SCHEMA_RE or built by us. */
export function qualify(schema: string, name: string): string {
  return `"${schema}"."${name}"`;
}

/** Where LISTEN connects: `sessionUrl`, else the URL's session hosts, else its hosts. */
function sessionOf(
  location: PostgresLocation,
  sessionUrl: string | undefined,
): ResolvedPostgresOptions["session"] {
  if (sessionUrl !== undefined) {
    const own = parsePostgresUrl(sessionUrl, "sessionUrl");
    if (own.pooler !== null) {
      throw new InvalidOptionError(
        "sessionUrl",
        "a direct URL (no ?pooler=)",
        "pooler=" + own.pooler,
      );
    }
    return Object.freeze({ location: own, hosts: own.hosts });
  }
  if (location.sessionHosts !== null) {
    return Object.freeze({ location, hosts: location.sessionHosts });
  }
  if (location.pooler !== null) {
    throw new InvalidOptionError(
      "sessionUrl",
      "a direct URL for LISTEN (or ?session_hosts= in url): a transaction pooler cannot keep a session",
      undefined,
    );
  }
  return Object.freeze({ location, hosts: location.hosts });
}
