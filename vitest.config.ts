import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // One worker process runs the files one after another and keeps the modules it loaded:
    // with isolation each of ~130 files re-imported the sources and their packages (test/core
    // and test/api: 112 s isolated, 53 s not, back to back on one machine). Tests share no module state on purpose (stores, clocks and
    // servers are made per test; PostgreSQL schemas are fresh per test).
    isolate: false,
  },
});
