/**
 * A throwaway pgbouncer (Debian's package: /usr/sbin/pgbouncer) in transaction pooling mode
 * in front of a server, on a random 127.0.0.1 port: every transaction may run on another
 * server connection, so nothing that leans on session state survives it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { chownToPostgres, freePort } from "./postgres-server.js";

export interface Pgbouncer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres?pooler=transaction` */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

const BINARY = process.env.PGBOUNCER_BIN ?? "/usr/sbin/pgbouncer";
const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** Starts pgbouncer in front of the server at `serverUrl` (a single 127.0.0.1 host). */
export async function startPgbouncer(serverUrl: string): Promise<Pgbouncer> {
  if (!existsSync(BINARY)) {
    throw new Error(
      `pgbouncer not found at ${BINARY}: install it (Debian: apt-get install -y pgbouncer) or set PGBOUNCER_BIN`,
    );
  }
  const server = new URL(serverUrl);
  const dir = mkdtempSync(join(tmpdir(), "duetime-pgbouncer-"));
  const port = await freePort();
  writeFileSync(join(dir, "users.txt"), '"postgres" ""\n');
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "pool_mode = transaction",
      "max_client_conn = 1000",
      "default_pool_size = 20",
      // node-postgres sends none of these, but psql-style clients do.
      "ignore_startup_parameters = extra_float_digits",
      `logfile = ${join(dir, "pgbouncer.log")}`,
      "log_connections = 0",
      "log_disconnections = 0",
    ].join("\n") + "\n",
  );
  chownToPostgres(dir);
  // pgbouncer refuses to run as root; -u makes it switch user itself (so signals reach it).
  const args = [...(isRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")];
  const proc: ChildProcess = spawn(BINARY, args, {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const onExit = (): void => {
    proc.kill("SIGTERM");
  };
  process.once("exit", onExit);
  const url = `postgres://postgres@127.0.0.1:${port}${server.pathname}?pooler=transaction`;
  await waitReady(`postgres://postgres@127.0.0.1:${port}${server.pathname}`, proc, () => stderr);
  return {
    url,
    port,
    async stop() {
      process.removeListener("exit", onExit);
      if (proc.exitCode === null) {
        const exited = new Promise<void>((r) => proc.once("exit", () => r()));
        // SIGTERM: immediate shutdown (SIGINT would wait for clients to finish).
        proc.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitReady(url: string, proc: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`pgbouncer exited (${proc.exitCode}): ${stderr()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`pgbouncer did not start: ${stderr()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
