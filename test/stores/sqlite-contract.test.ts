import { afterAll } from "vitest";
import { join } from "node:path";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { describeStoreContract } from "../contract/store-contract.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir();
let n = 0;
afterAll(() => dir.cleanup());

// A real SQLite file per test, with several shards as the contract expects.
describeStoreContract(
  "sqlite",
  async () => new SqliteStore({ path: join(dir.path, `t${n++}.db`), shardCount: 8 }),
);
