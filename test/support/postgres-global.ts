/**
 * vitest globalSetup: a throwaway PostgreSQL server for each worker (see postgres-server.ts),
 * shared by the files that worker runs one after another. Not one for all workers: a file's
 * transactions would then run beside another file's, and some cases see that (the change
 * feed reads only below the server's oldest open transaction). The servers start in the
 * background, so a run without PostgreSQL tests waits for nothing and the first file that
 * needs one waits only for what is left of its start; they are stopped, and their data
 * directories removed, when the run ends. Nothing is started with PG_URL set (that server
 * is used) or without PostgreSQL binaries (a file that needs a server then fails naming
 * what to install, as before).
 */
import type { TestProject } from "vitest/node";
import { findBinDir, freePort, startPostgres, type PostgresServer } from "./postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** One server URL per worker (VITEST_POOL_ID 1 takes the first); empty: none started. */
    sharedPostgresUrls: string[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.PG_URL || !hasBinaries()) {
    project.provide("sharedPostgresUrls", []);
    return async () => {};
  }
  const workers = Math.max(1, Number(project.config.maxWorkers) || 1);
  const urls: string[] = [];
  const starting: Promise<PostgresServer | null>[] = [];
  for (let i = 0; i < workers; i++) {
    const port = await freePort();
    urls.push(`postgres://postgres@127.0.0.1:${port}/postgres`);
    const server = startPostgres({ own: true, settings: { port: String(port) } });
    starting.push(
      server.catch((err: unknown) => {
        console.error(`the shared PostgreSQL server on port ${port} did not start`, err);
        return null;
      }),
    );
  }
  project.provide("sharedPostgresUrls", urls);
  return async () => {
    for (const server of await Promise.all(starting)) await server?.stop();
  };
}

function hasBinaries(): boolean {
  try {
    findBinDir();
    return true;
  } catch {
    return false;
  }
}
