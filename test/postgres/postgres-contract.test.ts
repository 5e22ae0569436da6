import { afterAll, beforeAll } from "vitest";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { describeStoreContract } from "../contract/store-contract.js";
import {
  dropCreatedSchemas,
  freshSchema,
  startPostgres,
  type PostgresServer,
} from "../support/postgres-server.js";

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  if (server) await dropCreatedSchemas(server.url);
  await server?.stop();
});

// A real PostgreSQL server, a fresh schema per test, hour buckets as the suite expects.
describeStoreContract("postgres", async () =>
  PostgresStore.open({
    url: server.url,
    schema: freshSchema("contract"),
    bucketWidthMs: 3_600_000,
    shardCount: 16,
    poolSize: 4,
  }),
);
