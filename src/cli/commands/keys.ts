import type { Command } from "commander";
import { validateTenant } from "../../core/schedule-input.js";
import { createApiKey, newSigningSecret, openKeyStore, type KeyStore } from "../../service/keys.js";
import { EXIT } from "../errors.js";
import { action, out, outJson, resolveDb, type GlobalOptions } from "../context.js";
import { iso, table } from "../format.js";

/** `duetime keys create|list|revoke|secret`: API keys and tenant signing secrets. */
export function registerKeys(program: Command): void {
  const keys = program
    .command("keys")
    .description("manage API keys of the HTTP service (stored as hashes in the database)");

  keys
    .command("create")
    .description("create an API key for a tenant; the key is printed once and never again")
    .requiredOption("--tenant <tenant>", "tenant the key acts for")
    .option("--json", "print the result as JSON")
    .action(
      action(async (o: { tenant: string; json?: boolean }, cmd: Command) => {
        const tenant = validateTenant(o.tenant, "--tenant");
        const r = await withKeys(cmd, (k) => createApiKey(k, tenant));
        if (o.json) {
          outJson(r);
        } else {
          out(`key ${r.id} for tenant ${r.tenant} (shown once; store it now):`);
          out(`  ${r.key}`);
          out(`webhook signing secret of tenant ${r.tenant} (verify Duetime-Signature with it):`);
          out(`  ${r.signingSecret}`);
        }
        return EXIT.ok;
      }),
    );

  keys
    .command("list")
    .description("list API keys (ids and prefixes, never the keys)")
    .option("--tenant <tenant>", "only this tenant's keys")
    .option("--json", "print the keys as JSON")
    .action(
      action(async (o: { tenant?: string; json?: boolean }, cmd: Command) => {
        const list = await withKeys(cmd, (k) =>
          k.apiKeysList(
            o.tenant === undefined ? {} : { tenant: validateTenant(o.tenant, "--tenant") },
          ),
        );
        if (o.json) {
          outJson({ keys: list });
          return EXIT.ok;
        }
        if (list.length === 0) {
          out("no keys");
          return EXIT.ok;
        }
        out(
          table(
            ["ID", "TENANT", "PREFIX", "CREATED", "REVOKED"],
            list.map((r) => [r.id, r.tenant, `${r.prefix}...`, iso(r.createdAt), iso(r.revokedAt)]),
          ),
        );
        return EXIT.ok;
      }),
    );

  keys
    .command("revoke")
    .description("revoke an API key by id (effective on the next request)")
    .argument("<id>", "key id (from keys list)")
    .option("--json", "print the outcome as JSON")
    .action(
      action(async (id: string, o: { json?: boolean }, cmd: Command) => {
        const revoked = await withKeys(cmd, (k) => k.apiKeyRevoke({ id, now: Date.now() }));
        if (o.json) outJson({ outcome: revoked ? "revoked" : "not-found", id });
        else out(revoked ? `revoked: key ${id}` : `not-found: no live key ${id}`);
        return revoked ? EXIT.ok : EXIT.notFound;
      }),
    );

  keys
    .command("secret")
    .description("print a tenant's webhook signing secret (--rotate replaces it)")
    .requiredOption("--tenant <tenant>", "tenant")
    .option("--rotate", "replace the secret; receivers must switch to the new one")
    .option("--json", "print the secret as JSON")
    .action(
      action(async (o: { tenant: string; rotate?: boolean; json?: boolean }, cmd: Command) => {
        const tenant = validateTenant(o.tenant, "--tenant");
        const secret = await withKeys(cmd, async (k) => {
          const now = Date.now();
          if (o.rotate) {
            const next = newSigningSecret();
            await k.tenantSecretSet({ tenant, secret: next, now });
            return next;
          }
          return k.tenantSecretEnsure({ tenant, secret: newSigningSecret(), now });
        });
        if (o.json) outJson({ tenant, signingSecret: secret });
        else out(secret);
        return EXIT.ok;
      }),
    );
}

async function withKeys<T>(cmd: Command, fn: (k: KeyStore) => Promise<T>): Promise<T> {
  const db = resolveDb(cmd.optsWithGlobals<GlobalOptions>());
  const store = await openKeyStore(db);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
