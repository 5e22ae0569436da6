/**
 * A throwaway primary with a streaming-replication standby, both on 127.0.0.1 random ports,
 * for failover tests: the primary from the initdb template, the standby from
 * `pg_basebackup -R` of it, replication synchronous (`synchronous_standby_names` naming
 * the standby, `synchronous_commit = on`) or asynchronous. `killPrimary()` kills the primary
 * with SIGKILL and `promote()` promotes the standby (`pg_ctl promote`), as an operator or a managed
 * service would at 3 a.m.
 *
 * Durability is otherwise off (fsync): a SIGKILL of processes keeps what the kernel holds,
 * and what matters here is what the standby had received when the primary died.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import {
  chownToPostgres,
  findBinDir,
  freePort,
  freshDataDir,
  asPostgres,
  runAs,
  runServer,
  throwawaySettings,
  type RunningServer,
} from "./postgres-server.js";

export interface PostgresPair {
  readonly primary: RunningServer;
  readonly standby: RunningServer;
  /** `postgres://postgres@127.0.0.1:<primary>,127.0.0.1:<standby>/postgres?target_session_attrs=read-write` */
  readonly url: string;
  /** SIGKILLs the primary and its backends, as when its machine dies. */
  killPrimary(): Promise<void>;
  /** Promotes the standby (`pg_ctl promote -w`: returns once it accepts writes). */
  promote(): Promise<void>;
  /** Stops both servers and removes their data. */
  stop(): Promise<void>;
}

const STANDBY_NAME = "duetime_standby";

export async function startPostgresPair(
  opts: { synchronous?: boolean } = {},
): Promise<PostgresPair> {
  const synchronous = opts.synchronous ?? true;
  const binDir = findBinDir();
  const primaryDir = freshDataDir(binDir);
  const primaryPort = await freePort();
  const primary = await runServer(binDir, primaryDir, {
    ...throwawaySettings(primaryPort),
    wal_level: "replica",
    max_wal_senders: "4",
    synchronous_commit: synchronous ? "on" : "off",
    synchronous_standby_names: synchronous ? STANDBY_NAME : "",
  });
  const standbyDir = join(mkdtempSync(join(tmpdir(), "duetime-pg-standby-")), "data");
  chownToPostgres(join(standbyDir, ".."));
  let standby: RunningServer;
  try {
    runAs(join(binDir, "pg_basebackup"), [
      ...["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres"],
      ...["-D", standbyDir, "-R", "-X", "stream", "--no-sync"],
    ]);
    const standbyPort = await freePort();
    standby = await runServer(binDir, standbyDir, {
      ...throwawaySettings(standbyPort),
      hot_standby: "on",
      // The name synchronous_standby_names waits for.
      primary_conninfo: `host=127.0.0.1 port=${primaryPort} user=postgres application_name=${STANDBY_NAME}`,
      // Once promoted it is the primary, with no standby to wait for.
      synchronous_commit: synchronous ? "on" : "off",
    });
    await waitStreaming(primary.url, synchronous);
  } catch (err) {
    await primary.stop();
    rmSync(primaryDir, { recursive: true, force: true });
    throw err;
  }
  return {
    primary,
    standby,
    url: `postgres://postgres@127.0.0.1:${primaryPort},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write`,
    killPrimary: () => primary.kill("SIGKILL"),
    async promote() {
      // Not execFileSync: the process under test keeps running while the standby promotes.
      const [cmd, args] = asPostgres(join(binDir, "pg_ctl"), ["promote", "-w", "-D", standbyDir]);
      await promisify(execFile)(cmd, args);
    },
    async stop() {
      await Promise.all([primary.stop(), standby.stop()]);
      rmSync(primaryDir, { recursive: true, force: true });
      rmSync(join(standbyDir, ".."), { recursive: true, force: true });
    },
  };
}

/** Waits until the primary sees the standby streaming (and, when synchronous, as sync). */
async function waitStreaming(url: string, synchronous: boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ sync_state: string }>(
        "SELECT sync_state FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'",
        [STANDBY_NAME],
      );
      const state = rows[0]?.sync_state;
      if (state !== undefined && (!synchronous || state === "sync")) return;
      if (Date.now() > deadline) throw new Error(`standby not streaming (state ${state})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await client.end();
  }
}
