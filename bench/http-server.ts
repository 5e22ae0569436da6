/**
 * Child process of the HTTP benchmarks: runs `startService` (as `duetime serve` does) on a
 * fresh SQLite file with one API key, prints one JSON line {url, key, secret} on stdout, and
 * stops gracefully on SIGTERM. A process of its own, so the load generator and the receiver
 * do not share the server's event loop.
 *
 *   tsx bench/http-server.ts <db path> [concurrency]
 */
import { createApiKey, openKeyStore } from "../src/service/keys.js";
import { startService } from "../src/service/service.js";

const db = process.argv[2];
if (!db) throw new Error("usage: http-server.ts <db path> [concurrency]");
const keys = await openKeyStore(db);
const k = await createApiKey(keys, "bench");
await keys.close();
const svc = await startService({
  db,
  port: 0,
  allowPrivateTargets: true,
  logLevel: "warn",
  rateLimit: { perSecond: 0 },
  batchBodyLimit: 64 * 1024 * 1024,
  scheduler: { concurrency: Number(process.argv[3] ?? 200) },
  mcp: false,
});
process.stdout.write(`${JSON.stringify({ url: svc.url, key: k.key, secret: k.signingSecret })}\n`);
const stop = (): void => {
  void svc.close().then(() => process.exit(0));
};
process.once("SIGTERM", stop).once("SIGINT", stop);
