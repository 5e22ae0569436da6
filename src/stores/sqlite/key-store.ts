import Database from "better-sqlite3";

/**
 * API keys and tenant signing secrets of the HTTP service, in the jobs' SQLite file. The
 * tables are the service's own, created idempotently (CREATE ... IF NOT EXISTS) on open and
 * not part of the jobs schema's versioned migrations, so a library-only database never has
 * them. Implements the service's KeyStore interface structurally (a store never imports the
 * service). Each method is one indexed statement.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS service_api_keys (
    id         TEXT PRIMARY KEY,
    tenant     TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    prefix     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS service_tenants (
    tenant         TEXT PRIMARY KEY,
    signing_secret TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

const SQL = {
  // The UNIQUE index on hash makes this a point read.
  keyByHash: `SELECT id, tenant FROM service_api_keys WHERE hash = ? AND revoked_at IS NULL`,
  keyInsert: `INSERT INTO service_api_keys (id, tenant, hash, prefix, created_at)
              VALUES (?, ?, ?, ?, ?)`,
  keysAll: `SELECT id, tenant, prefix, created_at, revoked_at FROM service_api_keys
            ORDER BY tenant, created_at, id`,
  keysOfTenant: `SELECT id, tenant, prefix, created_at, revoked_at FROM service_api_keys
                 WHERE tenant = ? ORDER BY created_at, id`,
  // Primary key lookups, one per id of the JSON array.
  keysLive: `SELECT id FROM service_api_keys
             WHERE id IN (SELECT value FROM json_each(?)) AND revoked_at IS NULL`,
  keyRevoke: `UPDATE service_api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`,
  secretInsert: `INSERT INTO service_tenants (tenant, signing_secret, created_at, updated_at)
                 VALUES (?, ?, ?, ?) ON CONFLICT (tenant) DO NOTHING`,
  secretGet: `SELECT signing_secret FROM service_tenants WHERE tenant = ?`,
  secretSet: `INSERT INTO service_tenants (tenant, signing_secret, created_at, updated_at)
              VALUES (?, ?, ?, ?)
              ON CONFLICT (tenant) DO UPDATE SET signing_secret = excluded.signing_secret,
                                                 updated_at = excluded.updated_at`,
} as const;

interface KeyRow {
  id: string;
  tenant: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}

export class SqliteKeyStore {
  private readonly db: Database.Database;
  private readonly s: Record<keyof typeof SQL, Database.Statement>;

  constructor(options: { path: string; busyTimeoutMs?: number }) {
    this.db = new Database(options.path);
    try {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
      this.db.exec(SCHEMA);
    } catch (err) {
      this.db.close();
      throw err;
    }
    const s = {} as Record<keyof typeof SQL, Database.Statement>;
    for (const [name, sql] of Object.entries(SQL)) {
      s[name as keyof typeof SQL] = this.db.prepare(sql);
    }
    this.s = s;
  }

  async apiKeyInsert(p: {
    id: string;
    tenant: string;
    hash: string;
    prefix: string;
    now: number;
  }): Promise<void> {
    this.s.keyInsert.run(p.id, p.tenant, p.hash, p.prefix, p.now);
  }

  async apiKeyFindByHash(p: { hash: string }): Promise<{ id: string; tenant: string } | null> {
    const row = this.s.keyByHash.get(p.hash) as { id: string; tenant: string } | undefined;
    return row ?? null;
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
    const rows = (
      p.tenant === undefined ? this.s.keysAll.all() : this.s.keysOfTenant.all(p.tenant)
    ) as KeyRow[];
    return rows.map((r) => ({
      id: r.id,
      tenant: r.tenant,
      prefix: r.prefix,
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
    }));
  }

  async apiKeysLive(p: { ids: readonly string[] }): Promise<string[]> {
    if (p.ids.length === 0) return [];
    const rows = this.s.keysLive.all(JSON.stringify(p.ids)) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async apiKeyRevoke(p: { id: string; now: number }): Promise<boolean> {
    return this.s.keyRevoke.run(p.now, p.id).changes === 1;
  }

  async tenantSecretEnsure(p: { tenant: string; secret: string; now: number }): Promise<string> {
    // Read first: a write transaction per webhook delivery would cost an fsync each.
    const existing = this.s.secretGet.get(p.tenant) as { signing_secret: string } | undefined;
    if (existing) return existing.signing_secret;
    this.s.secretInsert.run(p.tenant, p.secret, p.now, p.now);
    return (this.s.secretGet.get(p.tenant) as { signing_secret: string }).signing_secret;
  }

  async tenantSecretSet(p: { tenant: string; secret: string; now: number }): Promise<void> {
    this.s.secretSet.run(p.tenant, p.secret, p.now, p.now);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
