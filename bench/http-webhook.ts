/**
 * Webhook fire rate and lateness: jobs created over the API, delivered by the server (child
 * process) to a loopback receiver here that checks every signature. Two runs: a precision
 * run (jobs due spread over a window: lateness = arrival at the receiver minus due time,
 * HTTP delivery included) and a burst (all due at once: delivery rate).
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "../src/webhooks/index.js";
import { fmt, rate, type BenchResult } from "./lib/report.js";
import { ascending, percentile } from "./lib/stats.js";
import {
  httpSizes,
  postJson,
  startBenchServer,
  type BenchServer,
  type HttpSizes,
} from "./http-common.js";

interface Arrival {
  id: string;
  dueAt: number;
  at: number;
  valid: boolean;
}

async function startReceiver(secret: () => string) {
  const arrivals: Arrival[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString("utf8");
      const parsed = JSON.parse(body) as { id: string; dueAt: string };
      arrivals.push({
        id: parsed.id,
        dueAt: Date.parse(parsed.dueAt),
        at,
        valid: isAuthentic(secret(), req.headers, body),
      });
      res.writeHead(204).end();
      for (const w of waiters.splice(0)) w();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    async waitFor(n: number, timeoutMs: number): Promise<boolean> {
      const deadline = Date.now() + timeoutMs;
      while (arrivals.length < n && Date.now() < deadline) {
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
      return arrivals.length >= n;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function schedule(
  server: BenchServer,
  jobs: { dueAt: string; target: string }[],
): Promise<void> {
  for (let i = 0; i < jobs.length; i += 1000) {
    const r = await postJson(server, "/v1/jobs/batch", { jobs: jobs.slice(i, i + 1000) });
    if (r.status !== 201)
      throw new Error(`batch create answered ${r.status}: ${JSON.stringify(r.body)}`);
  }
}

export async function httpWebhook(sizes: HttpSizes = httpSizes()): Promise<BenchResult> {
  let secret = "";
  const rx = await startReceiver(() => secret);
  const server = await startBenchServer(200);
  secret = server.secret;
  try {
    // Precision: due times spread across the window, starting after scheduling is done.
    const start = Date.now() + 1500 + sizes.webhookJobs / 20;
    const spread = Array.from({ length: sizes.webhookJobs }, (_, i) => ({
      dueAt: new Date(
        start + Math.floor((i * sizes.webhookWindowMs) / sizes.webhookJobs),
      ).toISOString(),
      target: rx.url,
    }));
    await schedule(server, spread);
    const complete1 = await rx.waitFor(
      sizes.webhookJobs,
      start - Date.now() + sizes.webhookWindowMs + 30_000,
    );
    const precise = rx.arrivals.splice(0);

    // Burst: every job due at the same instant.
    const burstAt = Date.now() + 1500 + sizes.burstJobs / 20;
    const burst = Array.from({ length: sizes.burstJobs }, () => ({
      dueAt: new Date(burstAt).toISOString(),
      target: rx.url,
    }));
    await schedule(server, burst);
    const complete2 = await rx.waitFor(sizes.burstJobs, burstAt - Date.now() + 120_000);
    const burstArrivals = rx.arrivals.splice(0);

    const late = ascending(precise.map((a) => a.at - a.dueAt));
    const burstLate = ascending(burstArrivals.map((a) => a.at - a.dueAt));
    const burstSpan =
      burstArrivals.length === 0 ? 0 : Math.max(...burstArrivals.map((a) => a.at)) - burstAt;
    const burstRate = burstArrivals.length / Math.max(0.001, burstSpan / 1000);
    const invalid = [...precise, ...burstArrivals].filter((a) => !a.valid).length;
    const early = [...late, ...burstLate].filter((l) => l < 0).length;
    const dupes =
      precise.length -
      new Set(precise.map((a) => a.id)).size +
      (burstArrivals.length - new Set(burstArrivals.map((a) => a.id)).size);
    return {
      name: "http-webhook",
      title: `Webhook delivery to a loopback receiver (scale ${sizes.scale}; signatures verified)`,
      goals: [
        {
          metric: `lateness p99, ${sizes.webhookJobs} jobs due over ${sizes.webhookWindowMs / 1000} s`,
          value: `${fmt(percentile(late, 99), 0)} ms`,
          goal: "< 100 ms",
          baseline: `p50 ${fmt(percentile(late, 50), 0)} ms`,
          ratio: "-",
          pass: complete1 && percentile(late, 99) < 100,
        },
        {
          metric: `burst: ${sizes.burstJobs} jobs due at once, delivered`,
          value: `${rate(burstRate)}`,
          goal: "info",
          baseline: "-",
          ratio: "-",
          pass: null,
        },
        {
          metric: "every job delivered once, signed, never early",
          value: `${precise.length + burstArrivals.length}/${sizes.webhookJobs + sizes.burstJobs} delivered, ${invalid} bad signatures, ${early} early, ${dupes} duplicates`,
          goal: "all",
          baseline: "-",
          ratio: "-",
          pass: complete1 && complete2 && invalid === 0 && early === 0 && dupes === 0,
        },
      ],
      details: [
        {
          title: "#### Lateness at the receiver (ms: arrival minus due time)",
          headers: ["run", "jobs", "p50", "p90", "p99", "max"],
          rows: [
            ["spread", late.length, ...[50, 90, 99, 100].map((p) => fmt(percentile(late, p), 0))],
            [
              "burst",
              burstLate.length,
              ...[50, 90, 99, 100].map((p) => fmt(percentile(burstLate, p), 0)),
            ],
          ],
        },
      ],
      notes: [
        "Lateness includes the HTTP round trip to the receiver; the server fires each job from its timing wheel at its due millisecond.",
        "Delivery concurrency 200; the receiver answers 204 at once.",
      ],
    };
  } finally {
    await server.stop();
    await rx.close();
  }
}

function isAuthentic(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  try {
    verifyWebhook({ secret, headers, body });
    return true;
  } catch {
    return false;
  }
}
