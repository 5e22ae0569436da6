/**
 * A throwaway PostgreSQL server for tests and benchmarks.
 *
 * - With `PG_URL` set, that server is used as is (it must be on 127.0.0.1 or localhost).
 * - Otherwise the machine's PostgreSQL binaries (`PG_BIN`, else the newest
 *   /usr/lib/postgresql/<version>/bin, else `pg_config --bindir`) start a private server:
 *   a data directory under /tmp (copied from a cached `initdb` template, so a start costs a
 *   fraction of a second), a random free port on 127.0.0.1, no Unix socket, durability off
 *   (fsync, synchronous_commit) because the data dies with the test. As root, the server
 *   runs as the `postgres` user (PostgreSQL refuses to run as root).
 *
 * Every test isolates itself with `freshSchema()` (a new schema per test), so under vitest
 * each worker's files share one server: test/support/postgres-global.ts (the config's
 * globalSetup) starts them while the first files load, and `startPostgres()` hands out the
 * calling worker's.
 * A file that stops, restarts or reconfigures its server asks for one of its own
 * (`{ own: true }`, or `settings`). Starting a server per file cost about 1-2 s of CPU each
 * (the template's copy, the postmaster's start and stop), some 35 times a run.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  renameSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";

export interface PostgresServer {
  /** Connection URL (postgres://...@127.0.0.1:port/db). */
  readonly url: string;
  /** Stops the server (a no-op for a server named by PG_URL). */
  stop(): Promise<void>;
  /**
   * Restarts the server (same data, same port): for fault tests. With `crash`, an
   * immediate shutdown (SIGQUIT: no checkpoint, crash recovery on start) instead of a fast one.
   */
  restart(opts?: { crash?: boolean }): Promise<void>;
  /** Stops the server, keeping its data, until `resume()`: an outage (no-op for PG_URL). */
  halt(): Promise<void>;
  /** Starts a halted server again (same data, same port). */
  resume(): Promise<void>;
  /** True when this process started the server (so restart() is available). */
  readonly owned: boolean;
}

let counter = 0;
const created = new Set<string>();

/** A schema name unique to this process and call, for one test's store. */
export function freshSchema(prefix = "t"): string {
  counter += 1;
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter}`;
  created.add(name);
  return name;
}

/**
 * Drops every schema `freshSchema` named in this process (call in afterAll before
 * stopping the server): a server named by PG_URL outlives the run, so tests clean up.
 */
export async function dropCreatedSchemas(url: string): Promise<void> {
  const names = [...created];
  created.clear();
  if (names.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const n of names) await client.query(`DROP SCHEMA IF EXISTS "${n}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Drops a schema created by a test (best effort). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

export interface StartPostgresOptions {
  /** Server settings beyond throwawaySettings(): a server of its own is started. */
  readonly settings?: Record<string, string>;
  /**
   * A server of this caller's own (it may stop, halt or restart it), not its worker's
   * shared one. PG_URL still wins: such tests check `owned` and skip what they cannot do.
   */
  readonly own?: boolean;
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const given = process.env.PG_URL;
  if (given) {
    const host = new URL(given).hostname;
    if (host !== "127.0.0.1" && host !== "localhost" && host !== "::1" && host !== "[::1]") {
      throw new Error(`PG_URL must point at 127.0.0.1 or localhost, got host ${host}`);
    }
    return notOwned(given);
  }
  const shared = options.own || options.settings ? null : sharedServerUrl();
  if (shared) {
    await waitReachable(shared);
    return notOwned(shared);
  }
  return startLocalServer(options.settings ?? {});
}

/** A server someone else started and stops: stop, restart, halt and resume do nothing. */
function notOwned(url: string): PostgresServer {
  const none = async (): Promise<void> => {};
  return { url, owned: false, stop: none, restart: none, halt: none, resume: none };
}

/** This vitest worker's shared server (postgres-global.ts), if one was started for it. */
function sharedServerUrl(): string | null {
  if (!process.env.VITEST) return null; // a benchmark or script: a server of its own
  let urls: string[];
  try {
    urls = inject("sharedPostgresUrls");
  } catch {
    return null; // a vitest config without the globalSetup
  }
  const worker = Number(process.env.VITEST_POOL_ID ?? "1");
  return urls.length === 0 ? null : (urls[(Math.max(1, worker) - 1) % urls.length] ?? null);
}

/** Resolves once `url` answers (the shared server starts while the first files load). */
async function waitReachable(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) {
        throw new Error(`the run's shared PostgreSQL server (${url}) did not answer in 60 s`, {
          cause: err,
        });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export function findBinDir(): string {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv && existsSync(join(fromEnv, "postgres"))) return fromEnv;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "postgres")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  try {
    const dir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
    if (existsSync(join(dir, "postgres"))) return dir;
  } catch {
    // fall through to the error below
  }
  throw new Error(
    "no PostgreSQL server binaries found: set PG_URL to a running server on 127.0.0.1, " +
      "set PG_BIN, or install them (Debian: apt-get install -y postgresql-15)",
  );
}

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** The command that runs a PostgreSQL binary: as the postgres user when we are root. */
export function asPostgres(bin: string, args: string[]): [string, string[]] {
  return isRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

/** Runs a PostgreSQL binary, as the postgres user when we are root. */
export function runAs(bin: string, args: string[]): void {
  const [cmd, cmdArgs] = asPostgres(bin, args);
  execFileSync(cmd, cmdArgs, { stdio: "pipe" });
}

export function chownToPostgres(path: string): void {
  if (isRoot) execFileSync("chown", ["-R", "postgres:postgres", path]);
}

/** An initdb'd directory, made once per machine and copied for each server. */
function templateDir(binDir: string): string {
  const version = binDir.split("/").filter(Boolean).slice(-2, -1)[0] ?? "pg";
  const dir = join(
    tmpdir(),
    `duetime-pg-template-${version}-${isRoot ? "root" : process.getuid?.()}`,
  );
  if (existsSync(join(dir, "PG_VERSION")) && existsSync(join(dir, "ready"))) return dir;
  // Build beside, then rename: concurrent test files never see a half-made template.
  const building = mkdtempSync(join(tmpdir(), "duetime-pg-initdb-"));
  chownToPostgres(building);
  runAs(join(binDir, "initdb"), [
    "-D",
    building,
    "-U",
    "postgres",
    "--auth=trust",
    "--encoding=UTF8",
    "--no-sync",
    "--locale=C",
  ]);
  execFileSync("touch", [join(building, "ready")]);
  chownToPostgres(building);
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true }); // another process won the race
  }
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A fresh data directory under /tmp, copied from the initdb template. */
export function freshDataDir(binDir: string): string {
  const template = templateDir(binDir);
  const base = join(tmpdir(), "duetime-pg");
  mkdirSync(base, { recursive: true });
  const dataDir = mkdtempSync(join(base, "data-"));
  cpSync(template, dataDir, { recursive: true });
  rmSync(join(dataDir, "ready"), { force: true });
  execFileSync("chmod", ["700", dataDir]);
  chownToPostgres(dataDir);
  return dataDir;
}

/** Settings of every throwaway server: loopback only, durability off, room for tests. */
export function throwawaySettings(port: number): Record<string, string> {
  return {
    listen_addresses: "127.0.0.1",
    port: String(port),
    unix_socket_directories: "",
    fsync: "off",
    synchronous_commit: "off",
    full_page_writes: "off",
    max_connections: "200",
    shared_buffers: "256MB",
    max_locks_per_transaction: "256",
    log_min_messages: "fatal",
  };
}

async function startLocalServer(settings: Record<string, string>): Promise<PostgresServer> {
  const binDir = findBinDir();
  const dataDir = freshDataDir(binDir);
  const port = await freePort();
  const server = await runServer(binDir, dataDir, { ...throwawaySettings(port), ...settings });
  return {
    url: server.url,
    owned: true,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    restart: (opts: { crash?: boolean } = {}) => server.restart(opts),
    halt: () => server.kill("SIGINT"),
    resume: () => server.resume(),
  };
}

/** A postmaster this process runs on `dataDir`, which it may kill and start again. */
export interface RunningServer {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Signals the postmaster and waits for it to exit (SIGKILL: its children too). */
  kill(signal: NodeJS.Signals): Promise<void>;
  restart(opts?: { crash?: boolean }): Promise<void>;
  /** Starts it again if it is not running. */
  resume(): Promise<void>;
  /** Stops it (immediate shutdown); the data directory stays. */
  stop(): Promise<void>;
}

/** Starts a postmaster on `dataDir` with `conf` (its `port` must be set) and waits for it. */
export async function runServer(
  binDir: string,
  dataDir: string,
  conf: Record<string, string>,
): Promise<RunningServer> {
  const port = Number(conf.port);
  const args = ["-D", dataDir, ...Object.entries(conf).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;

  let child: ChildProcess | null = null;
  const launch = async (): Promise<void> => {
    const cmd = isRoot ? "runuser" : join(binDir, "postgres");
    const cmdArgs = isRoot ? ["-u", "postgres", "--", join(binDir, "postgres"), ...args] : args;
    const proc = spawn(cmd, cmdArgs, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    proc.stderr?.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    child = proc;
    await waitReady(url, proc, () => stderr);
  };
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    killServer(dataDir, signal);
    await exited;
  };
  const onExit = (): void => killServer(dataDir, "SIGQUIT");
  process.once("exit", onExit);
  await launch();
  return {
    url,
    port,
    dataDir,
    kill,
    async restart(opts: { crash?: boolean } = {}) {
      await kill(opts.crash ? "SIGQUIT" : "SIGINT");
      await launch();
    },
    async resume() {
      if (child === null) await launch();
    },
    async stop() {
      process.removeListener("exit", onExit);
      await kill("SIGQUIT");
    },
  };
}

/**
 * Signals the postmaster named in postmaster.pid (runuser forwards nothing reliably). A
 * SIGKILL goes to its children too, as when the machine dies: a backend left alive would
 * keep serving its connection for a moment.
 */
function killServer(dataDir: string, signal: NodeJS.Signals): void {
  try {
    const pidFile = execFileSync("head", ["-1", join(dataDir, "postmaster.pid")], {
      encoding: "utf8",
    }).trim();
    const pid = Number(pidFile);
    if (!(pid > 0)) return;
    const children = signal === "SIGKILL" ? childrenOf(pid) : [];
    process.kill(pid, signal);
    for (const c of children) {
      try {
        process.kill(c, signal);
      } catch {
        // already gone
      }
    }
  } catch {
    // not running
  }
}

/** Live children of `pid` (pgrep -P). */
export function childrenOf(pid: number): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when there is none
  }
}

async function waitReady(url: string, proc: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(`PostgreSQL exited with code ${proc.exitCode}: ${stderr()}`);
    }
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not start: ${stderr()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * The calling test file's server (the run's shared one, or with `own` one of the file's own):
 * got before its tests; the schemas the file created are dropped and a server of its own
 * stopped after them. Call at the top level of a test file; `url` and `server` read it.
 */
export function usePostgresServer(options: StartPostgresOptions = {}): {
  readonly url: string;
  readonly server: PostgresServer;
} {
  let running: PostgresServer | undefined;
  beforeAll(async () => {
    running = await startPostgres(options);
  });
  afterAll(async () => {
    if (!running) return;
    await dropCreatedSchemas(running.url);
    await running.stop();
  });
  const get = (): PostgresServer => {
    if (!running) throw new Error("the PostgreSQL server has not started yet (use it in a test)");
    return running;
  };
  return {
    get url() {
      return get().url;
    },
    get server() {
      return get();
    },
  };
}
