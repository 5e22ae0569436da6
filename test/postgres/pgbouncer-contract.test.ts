import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../src/core/errors.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { describeStoreContract } from "../contract/store-contract.js";
import { startPgbouncer, type Pgbouncer } from "../support/pgbouncer.js";
import {
  dropCreatedSchemas,
  freshSchema,
  startPostgres,
  type PostgresServer,
} from "../support/postgres-server.js";

/**
 * The whole store contract through a real pgbouncer in transaction pooling mode: every
 * pooled statement may land on another server connection, so any session state (a prepared
 * statement, a SET, a session advisory lock, a temporary table) would break a case. LISTEN
 * goes straight to the server (`?session_hosts=`).
 */
let server: PostgresServer;
let bouncer: Pgbouncer;
beforeAll(async () => {
  server = await startPostgres();
  bouncer = await startPgbouncer(server.url);
}, 60_000);
afterAll(async () => {
  await bouncer?.stop();
  if (server) {
    await dropCreatedSchemas(server.url);
    await server.stop();
  }
});

/** The pgbouncer URL with the server as the session host. */
function pooledUrl(): string {
  const direct = new URL(server.url);
  return `${bouncer.url}&session_hosts=${direct.hostname}:${direct.port}`;
}

describeStoreContract("postgres through pgbouncer (transaction pooling)", async () =>
  PostgresStore.open({
    url: pooledUrl(),
    schema: freshSchema("bouncer"),
    bucketWidthMs: 3_600_000,
    shardCount: 16,
    poolSize: 4,
  }),
);

describe("postgres behind a transaction pooler", () => {
  it("refuses a pooler URL with nowhere to LISTEN, naming sessionUrl", async () => {
    await expect(
      PostgresStore.open({ url: bouncer.url, schema: freshSchema("bouncer") }),
    ).rejects.toSatisfy((e) => e instanceof InvalidOptionError && e.option === "sessionUrl");
  });

  it("sends no session options through the pooler, so pgbouncer does not refuse the connection", async () => {
    const store = await PostgresStore.open({ url: pooledUrl(), schema: freshSchema("bouncer") });
    try {
      const { rows } = await store.connection.query<{ application_name: string }>(
        "SELECT current_setting('application_name') AS application_name",
      );
      expect(rows[0]?.application_name).toBe("duetime");
    } finally {
      await store.close();
    }
  });
});
