import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two worker processes, each running its files one after another and keeping the modules
    // it loaded: with isolation each of ~130 files re-imported the sources and their packages
    // (test/core and test/api: 112 s isolated, 53 s not, back to back on one machine). Tests
    // share no module state on purpose (stores, clocks and servers are made per test;
    // PostgreSQL schemas are fresh per test). A second worker uses what one leaves idle while
    // its tests wait on CLI processes, servers and sockets (the default on 2 cores is one).
    isolate: false,
    maxWorkers: 2,
    // One PostgreSQL server per worker (each test on a fresh schema of it).
    globalSetup: ["test/support/postgres-global.ts"],
  },
});
