import { afterEach, describe, expect, it, vi } from "vitest";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

const server = usePostgresServer();

describe("postgres connection pool", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("keeps two connections when idle: an idle node's statements open no new ones", async () => {
    const store = await PostgresStore.open({ url: server.url, schema: freshSchema("pool") });
    try {
      // Only the pool's idle timer runs on the fake clock; the sockets are real.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      const pids = async (n: number) =>
        Promise.all(
          Array.from({ length: n }, () =>
            store.connection
              .query<{ pid: number }>("SELECT pg_backend_pid() AS pid, pg_sleep(0.05)")
              .then((r) => r.rows[0]!.pid),
          ),
        );
      const burst = new Set(await pids(4));
      expect(burst.size).toBe(4);
      // node-postgres closes a client idle for 10 s (its default); an idle node's loops
      // run 30-60 s apart
      await vi.advanceTimersByTimeAsync(60_000);
      expect(store.connection.totalCount).toBe(2);
      const later = await pids(2);
      expect(later.every((pid) => burst.has(pid))).toBe(true);
      expect(store.connection.totalCount).toBe(2);
    } finally {
      vi.useRealTimers();
      await store.close();
    }
  });
});
