import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, ROOT } from "../cli/helpers.js";
import {
  dropCreatedSchemas,
  freshSchema,
  startPostgres,
  type PostgresServer,
} from "../support/postgres-server.js";

const run = promisify(execFile);
let server: PostgresServer;
beforeAll(async () => {
  await ensureBuilt();
  server = await startPostgres();
});
afterAll(async () => {
  if (server) await dropCreatedSchemas(server.url);
  await server?.stop();
});

describe("duetime migrate on PostgreSQL", () => {
  it("migrates one schema from several processes at once, then again as a no-op", async () => {
    const schema = freshSchema("cli");
    const url = `${server.url}${server.url.includes("?") ? "&" : "?"}schema=${schema}`;
    const migrate = () =>
      run(process.execPath, [join(ROOT, "dist/cli/main.js"), "migrate", "--db", url, "--json"], {
        timeout: 60_000,
      });
    const results = await Promise.all([migrate(), migrate(), migrate()]);
    for (const r of results) {
      expect(JSON.parse(r.stdout)).toMatchObject({ migrated: true, store: "postgres" });
    }
    const again = JSON.parse((await migrate()).stdout) as { bucketWidthMs: number };
    expect(again.bucketWidthMs).toBe(86_400_000);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const tables = await client.query(
        "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'jobs_live'",
        [schema],
      );
      expect(tables.rows[0].n).toBe(1);
    } finally {
      await client.end();
    }
  });
});
