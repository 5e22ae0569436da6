import { createHash, randomBytes } from "node:crypto";
import { validateTenant } from "../core/schedule-input.js";
import { openKeyStore as openStoreKeys } from "../stores/open-store.js";

/**
 * API keys and tenants. A key is 32 random bytes shown once (`dtk_<base64url>`); only its
 * SHA-256 is stored, so a leaked database does not leak usable keys (a 256-bit random key
 * needs no slow hash: there is nothing to brute-force). Each key maps to one tenant, and
 * each tenant has a webhook signing secret, kept in clear because the server signs with it.
 */

/** A key as listed (never the key itself). */
export interface ApiKeyRecord {
  readonly id: string;
  readonly tenant: string;
  /** The first characters of the key, to recognise it. */
  readonly prefix: string;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

/**
 * Where keys and tenant secrets live: beside the jobs, in the same database. Each store
 * (SQLite, PostgreSQL) implements it in its own folder and creates its tables idempotently.
 */
export interface KeyStore {
  apiKeyInsert(params: {
    id: string;
    tenant: string;
    hash: string;
    prefix: string;
    now: number;
  }): Promise<void>;
  /** The live (not revoked) key with this SHA-256, or null. */
  apiKeyFindByHash(params: { hash: string }): Promise<{ id: string; tenant: string } | null>;
  apiKeysList(params: { tenant?: string }): Promise<ApiKeyRecord[]>;
  /** Of these key ids, the ones of live (not revoked) keys; one read for all of them. */
  apiKeysLive(params: { ids: readonly string[] }): Promise<string[]>;
  /** Revokes a key by id; false when no live key has that id. */
  apiKeyRevoke(params: { id: string; now: number }): Promise<boolean>;
  /** The tenant's signing secret; stores `secret` first when the tenant has none. */
  tenantSecretEnsure(params: { tenant: string; secret: string; now: number }): Promise<string>;
  /** Replaces the tenant's signing secret. */
  tenantSecretSet(params: { tenant: string; secret: string; now: number }): Promise<void>;
  close(): Promise<void>;
}

const KEY_PREFIX = "dtk_";

export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

/** Creates a key for `tenant`; the returned `key` is the only time it exists in clear. */
export async function createApiKey(
  store: KeyStore,
  tenantInput: string,
  now = Date.now(),
): Promise<{ id: string; key: string; tenant: string; signingSecret: string }> {
  const tenant = validateTenant(tenantInput, "--tenant");
  const key = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  const id = `key_${randomBytes(8).toString("hex")}`;
  const signingSecret = await store.tenantSecretEnsure({
    tenant,
    secret: newSigningSecret(),
    now,
  });
  await store.apiKeyInsert({ id, tenant, hash: hashKey(key), prefix: key.slice(0, 10), now });
  return { id, key, tenant, signingSecret };
}

/** Whether `key` has the shape of a key this service makes (prefix, at most 100 chars). */
export function isWellFormedKey(key: string): boolean {
  return key.startsWith(KEY_PREFIX) && key.length <= 100;
}

/** Resolves a presented key to its tenant, or null (unknown, malformed or revoked). */
export async function authenticateKey(
  store: KeyStore,
  key: string,
): Promise<{ id: string; tenant: string } | null> {
  if (!isWellFormedKey(key)) return null;
  return store.apiKeyFindByHash({ hash: hashKey(key) });
}

/**
 * Opens the key store of a database named as `openStore` names it: a SQLite path, or a
 * postgres:// URL (src/stores/open-store.ts, the one factory that picks a store).
 */
export function openKeyStore(db: string): Promise<KeyStore> {
  return openStoreKeys(db);
}
