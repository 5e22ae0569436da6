import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { describeStoreContract } from "../contract/store-contract.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const server = usePostgresServer();

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
