/**
 * HTTP create throughput: autocannon on loopback against POST /v1/jobs (one job per
 * request) and POST /v1/jobs/batch (1000 per request), on a `duetime serve` equivalent in a
 * child process over a fresh SQLite file. Bounded by time and by request count. Afterwards
 * the store's counts are checked against the 2xx answers: nothing acknowledged is missing.
 */
import autocannon from "autocannon";
import { fmt, rate, type BenchResult } from "./lib/report.js";
import { getJson, httpSizes, postJson, startBenchServer, type HttpSizes } from "./http-common.js";

const TARGET = "https://hooks.example.com/bench";

export async function httpCreate(sizes: HttpSizes = httpSizes()): Promise<BenchResult> {
  const server = await startBenchServer();
  try {
    // Warm-up: JIT, SQLite page cache, connection pool.
    for (let i = 0; i < 50; i++) {
      await postJson(server, "/v1/jobs", { delayMs: 86_400_000, target: TARGET });
    }
    const single = await autocannon({
      url: `${server.url}/v1/jobs`,
      method: "POST",
      connections: 32,
      pipelining: 1,
      // Bounded by time and by count (autocannon's `amount` would override `duration`).
      duration: sizes.createSeconds,
      maxOverallRequests: sizes.createMax,
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        dueAt: "in 3 days",
        target: TARGET,
        payload: { user: 42, text: "remind me to stretch" },
      }),
    });

    const batchBody = JSON.stringify({
      jobs: Array.from({ length: 1000 }, (_, i) => ({
        delayMs: 3_600_000 + i * 1000,
        target: TARGET,
        payload: { i },
      })),
    });
    const batch = await autocannon({
      url: `${server.url}/v1/jobs/batch`,
      method: "POST",
      connections: Math.min(4, sizes.batchRequests),
      pipelining: 1,
      duration: 60,
      maxOverallRequests: sizes.batchRequests,
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: batchBody,
    });

    const stats = (await getJson(server, "/v1/stats")) as { counts: { pending: number } };
    const acknowledged = 50 + single["2xx"] + batch["2xx"] * 1000;
    // A run cut by its time limit leaves up to one request per connection unanswered, which
    // the server may still have stored: nothing acknowledged may be missing, nothing extra
    // beyond those.
    const consistent =
      stats.counts.pending >= acknowledged && stats.counts.pending <= acknowledged + 32 + 4 * 1000;
    const singleRate = single["2xx"] / (single.duration || 1);
    const batchJobsRate = (batch["2xx"] * 1000) / (batch.duration || 1);
    return {
      name: "http-create",
      title: `HTTP create throughput (scale ${sizes.scale}; loopback, server in its own process, SQLite)`,
      goals: [
        {
          metric: "POST /v1/jobs (1 job/request, 32 connections)",
          value: rate(singleRate),
          goal: "info",
          baseline: "-",
          ratio: "-",
          pass: null,
        },
        {
          metric: "POST /v1/jobs/batch (1000 jobs/request)",
          value: `${rate(batchJobsRate)} jobs`,
          goal: "info",
          baseline: rate(singleRate),
          ratio: `${fmt(batchJobsRate / Math.max(1, singleRate))}x`,
          pass: null,
        },
        {
          metric: "every 2xx stored (none lost), no error or non-2xx",
          value: `${stats.counts.pending} stored / ${acknowledged} acknowledged; ${single.errors + batch.errors} errors, ${single.non2xx + batch.non2xx} non-2xx`,
          goal: "all",
          baseline: "-",
          ratio: "-",
          pass: consistent && single.non2xx + batch.non2xx + single.errors + batch.errors === 0,
        },
      ],
      details: [
        {
          title: "#### Latency (ms)",
          headers: ["route", "requests", "req/s", "p50", "p90", "p99", "max"],
          rows: [
            [
              "POST /v1/jobs",
              single.requests.total,
              fmt(single.requests.average, 0),
              single.latency.p50,
              single.latency.p90,
              single.latency.p99,
              single.latency.max,
            ],
            [
              "POST /v1/jobs/batch",
              batch.requests.total,
              fmt(batch.requests.average, 1),
              batch.latency.p50,
              batch.latency.p90,
              batch.latency.p99,
              batch.latency.max,
            ],
          ],
        },
      ],
      notes: [
        "Each single request is authenticated (SHA-256 of the key, indexed lookup), rate-limit checked, validated by the library's validator and committed in its own SQLite transaction.",
        "The load generator and the server share this machine's cores.",
      ],
    };
  } finally {
    await server.stop();
  }
}
