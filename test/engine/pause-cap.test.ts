import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { QuotaExceededError } from "../../src/core/errors.js";
import type { Store } from "../../src/store/store.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { silentLogger } from "../support/harness.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";
import { tempDir } from "../support/temp-dir.js";

const server = usePostgresServer();
const dir = tempDir("duetime-pause-cap-");
afterAll(() => dir.cleanup());

const MAX = 3;
const EACH = 4;

/** Two stores on one database: two nodes (PostgreSQL) or two processes' connections (SQLite). */
const stores: Record<string, () => Promise<[Store, Store]>> = {
  sqlite: async () => {
    const path = join(dir.path, "cap.db");
    return [new SqliteStore({ path }), new SqliteStore({ path })];
  },
  postgres: async () => {
    const schema = freshSchema("pause_cap");
    const a = await PostgresStore.open({ url: server.url, schema });
    return [a, await PostgresStore.open({ url: server.url, schema })];
  },
};

describe.each(Object.keys(stores))("open-pause cap under concurrent pauses [%s]", (name) => {
  it(`${EACH * 2} pauses at once through two schedulers: exactly maxOpenPauses (${MAX}) are made`, async () => {
    const [a, b] = await stores[name]!();
    const clock = new ManualClock(Date.UTC(2026, 2, 1));
    const nodes = [a, b].map(
      (store) => new Scheduler({ store, clock, logger: silentLogger, maxOpenPauses: MAX }),
    );
    try {
      const calls = Array.from({ length: EACH * 2 }, (_, i) =>
        nodes[i % 2]!.pause({ scope: { target: `t${i}` } }),
      );
      const settled = await Promise.allSettled(calls);
      const made = settled.filter((s) => s.status === "fulfilled");
      const refused = settled.flatMap((s) => (s.status === "rejected" ? [s.reason] : []));
      expect(made).toHaveLength(MAX);
      expect(refused).toHaveLength(EACH * 2 - MAX);
      for (const e of refused) {
        expect(e).toBeInstanceOf(QuotaExceededError);
        expect(e).toMatchObject({ quota: "openPauses" });
      }
      // what both nodes read back: the three, nothing half-written
      for (const n of nodes) expect(await n.listPauses()).toHaveLength(MAX);
    } finally {
      for (const n of nodes) await n.close();
    }
  });
});
