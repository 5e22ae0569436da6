/**
 * Child process of the HTTP benchmarks: runs `startService` (as `duetime serve` does) on a
 * fresh SQLite file with an API key per tenant, prints one JSON line {url, key, secret,
 * tenants} on stdout (key and secret: the first tenant's), and stops gracefully on SIGTERM.
 * A process of its own, so the load generator and the receivers do not share the server's
 * event loop.
 *
 *   tsx bench/http-server.ts <db path> [config JSON: BenchServerConfig]
 */
import { createApiKey, openKeyStore } from "../src/service/keys.js";
import { startService } from "../src/service/service.js";
import type { BenchServerConfig } from "./http-common.js";

const db = process.argv[2];
if (!db) throw new Error("usage: http-server.ts <db path> [config JSON]");
const config = JSON.parse(process.argv[3] ?? "{}") as BenchServerConfig;
const keys = await openKeyStore(db);
const tenants: Record<string, { key: string; secret: string }> = {};
for (const tenant of config.tenants ?? ["bench"]) {
  const k = await createApiKey(keys, tenant);
  tenants[tenant] = { key: k.key, secret: k.signingSecret };
}
await keys.close();
const svc = await startService({
  db,
  port: 0,
  allowPrivateTargets: true,
  logLevel: "warn",
  rateLimit: { perSecond: 0 },
  batchBodyLimit: 64 * 1024 * 1024,
  ...config.service,
  scheduler: { concurrency: config.concurrency ?? 200, ...config.service?.scheduler },
  mcp: false,
});
const first = Object.values(tenants)[0]!;
process.stdout.write(`${JSON.stringify({ url: svc.url, ...first, tenants })}\n`);
const stop = (): void => {
  void svc.close().then(() => process.exit(0));
};
process.once("SIGTERM", stop).once("SIGINT", stop);
