import pg from "pg";
import { connectorFor, ignoreCheckedOutErrors, inTransaction } from "./connection.js";
import { parsePostgresUrl } from "./url.js";

/**
 * API keys and tenant signing secrets of the HTTP service in PostgreSQL, in the same schema
 * as the jobs (`?schema=` of the URL, default "duetime"). The tables are the service's own,
 * created idempotently on open (CREATE ... IF NOT EXISTS), outside the jobs' versioned
 * migrations. Implements the service's KeyStore interface structurally (a store never
 * imports the service). Tables are small and unpartitioned; no shard key is needed because
 * every read is a point read by primary or unique key.
 */
export class PostgresKeyStore {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly t: { keys: string; tenants: string },
  ) {}

  static async open(url: string): Promise<PostgresKeyStore> {
    const location = parsePostgresUrl(url, "db");
    const schema = location.schema ?? "duetime";
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
      throw new Error(`schema name ${JSON.stringify(schema)}: expected [a-z_][a-z0-9_]*`);
    }
    const connector = connectorFor(location, location.hosts);
    const pool = new pg.Pool({
      ...connector.config(null),
      Client: connector.Client,
      application_name: "duetime-keys",
      max: 4,
    });
    pool.on("error", () => undefined); // an idle client's lost connection is replaced on use
    ignoreCheckedOutErrors(pool);
    const t = { keys: `"${schema}".service_api_keys`, tenants: `"${schema}".service_tenants` };
    try {
      // Serialised by an advisory lock: concurrent CREATE IF NOT EXISTS can still collide.
      // A transaction's lock, so a transaction pooler (pgbouncer) can carry it.
      await inTransaction(pool, async (client) => {
        await client.query("SELECT pg_advisory_xact_lock(hashtext('duetime-service-keys'))");
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await client.query(`
          CREATE TABLE IF NOT EXISTS ${t.keys} (
            id         text PRIMARY KEY,
            tenant     text NOT NULL,
            hash       text NOT NULL UNIQUE,
            prefix     text NOT NULL,
            created_at bigint NOT NULL,
            revoked_at bigint
          )`);
        await client.query(`
          CREATE TABLE IF NOT EXISTS ${t.tenants} (
            tenant         text PRIMARY KEY,
            signing_secret text NOT NULL,
            created_at     bigint NOT NULL,
            updated_at     bigint NOT NULL
          )`);
      });
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PostgresKeyStore(pool, t);
  }

  async apiKeyInsert(p: {
    id: string;
    tenant: string;
    hash: string;
    prefix: string;
    now: number;
  }): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.t.keys} (id, tenant, hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5)`,
      [p.id, p.tenant, p.hash, p.prefix, p.now],
    );
  }

  async apiKeyFindByHash(p: { hash: string }): Promise<{ id: string; tenant: string } | null> {
    const r = await this.pool.query<{ id: string; tenant: string }>(
      `SELECT id, tenant FROM ${this.t.keys} WHERE hash = $1 AND revoked_at IS NULL`,
      [p.hash],
    );
    return r.rows[0] ?? null;
  }

  async apiKeysList(p: { tenant?: string }): Promise<
    {
      id: string;
      tenant: string;
      prefix: string;
      createdAt: number;
      revokedAt: number | null;
    }[]
  > {
    const r = await this.pool.query<{
      id: string;
      tenant: string;
      prefix: string;
      created_at: string;
      revoked_at: string | null;
    }>(
      `SELECT id, tenant, prefix, created_at, revoked_at FROM ${this.t.keys}
       WHERE $1::text IS NULL OR tenant = $1 ORDER BY tenant, created_at, id`,
      [p.tenant ?? null],
    );
    return r.rows.map((row) => ({
      id: row.id,
      tenant: row.tenant,
      prefix: row.prefix,
      createdAt: Number(row.created_at),
      revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    }));
  }

  /** Primary key lookups, one per id. */
  async apiKeysLive(p: { ids: readonly string[] }): Promise<string[]> {
    if (p.ids.length === 0) return [];
    const r = await this.pool.query<{ id: string }>(
      `SELECT id FROM ${this.t.keys} WHERE id = ANY($1::text[]) AND revoked_at IS NULL`,
      [p.ids],
    );
    return r.rows.map((row) => row.id);
  }

  async apiKeyRevoke(p: { id: string; now: number }): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE ${this.t.keys} SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`,
      [p.now, p.id],
    );
    return r.rowCount === 1;
  }

  async tenantSecretEnsure(p: { tenant: string; secret: string; now: number }): Promise<string> {
    const r = await this.pool.query<{ signing_secret: string }>(
      `WITH ins AS (
         INSERT INTO ${this.t.tenants} (tenant, signing_secret, created_at, updated_at)
         VALUES ($1, $2, $3, $3) ON CONFLICT (tenant) DO NOTHING RETURNING signing_secret)
       SELECT signing_secret FROM ins
       UNION ALL SELECT signing_secret FROM ${this.t.tenants} WHERE tenant = $1
       LIMIT 1`,
      [p.tenant, p.secret, p.now],
    );
    return r.rows[0]!.signing_secret;
  }

  async tenantSecretSet(p: { tenant: string; secret: string; now: number }): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.t.tenants} (tenant, signing_secret, created_at, updated_at)
       VALUES ($1, $2, $3, $3)
       ON CONFLICT (tenant) DO UPDATE SET signing_secret = EXCLUDED.signing_secret,
                                          updated_at = EXCLUDED.updated_at`,
      [p.tenant, p.secret, p.now],
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
