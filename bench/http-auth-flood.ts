/**
 * Failed authentications under a flood. autocannon sends GET /v1/jobs with a fresh unknown
 * key on every request (32 connections from 127.0.0.1, bounded by time and count) while a
 * legitimate client on another address (127.0.0.2) reads GET /v1/jobs?limit=1 in a loop.
 * Two servers in the same run, each in its own process on a fresh SQLite file: the service
 * as shipped (a per-address budget of failed authentications, checked before the key is
 * hashed or looked up) and the same service with that budget off (every bad key hashed and
 * read from the key store, as before issue 10). A 401 is a key that was looked up; a 429 was
 * refused before the key check. The legitimate client's latency with no flood is measured
 * first on each server: the same-run baseline.
 */
import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import autocannon from "autocannon";
import { fmt, rate, type BenchResult } from "./lib/report.js";
import { httpSizes, startBenchServer, type BenchServer, type HttpSizes } from "./http-common.js";

interface FloodRun {
  readonly label: string;
  readonly sent: number;
  readonly perSecond: number;
  readonly lookedUp: number;
  readonly refusedEarly: number;
  readonly idle: Latency;
  readonly flooded: Latency;
}

interface Latency {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
}

function pct(part: number, whole: number): string {
  return `${fmt((100 * part) / Math.max(1, whole), 1)}%`;
}

function latencyOf(samples: number[]): Latency {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { n: s.length, p50: at(0.5), p99: at(0.99) };
}

/** One legitimate GET from 127.0.0.2 on a kept-alive connection; resolves to its ms. */
function legitGet(server: BenchServer, agent: Agent): Promise<number> {
  const url = new URL("/v1/jobs?limit=1", server.url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        agent,
        localAddress: "127.0.0.2",
        headers: { authorization: `Bearer ${server.key}` },
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode === 200) resolve(performance.now() - started);
          else reject(new Error(`legitimate client answered ${res.statusCode}`));
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Legitimate requests one after another until `until()` says stop (at least `min`). */
async function legitLoop(server: BenchServer, until: () => boolean, min = 0): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  try {
    while (samples.length < min || !until()) samples.push(await legitGet(server, agent));
  } finally {
    agent.destroy();
  }
  return samples;
}

async function floodRun(
  label: string,
  authFailures: number | undefined,
  sizes: HttpSizes,
): Promise<FloodRun> {
  const server = await startBenchServer({
    service:
      authFailures === undefined
        ? {}
        : { authFailureLimit: { perSecond: authFailures, burst: Math.max(1, authFailures * 10) } },
  });
  try {
    const idle = latencyOf(
      await legitLoop(server, () => true, sizes.scale === "tiny" ? 200 : 2000),
    );
    let flooding = true;
    const legit = legitLoop(server, () => !flooding);
    const flood = await autocannon({
      url: `${server.url}/v1/jobs`,
      connections: 32,
      pipelining: 1,
      duration: sizes.createSeconds,
      maxOverallRequests: sizes.createMax,
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            headers: {
              ...req.headers,
              authorization: `Bearer dtk_${randomBytes(32).toString("base64url")}`,
            },
          }),
        },
      ],
    });
    flooding = false;
    const flooded = latencyOf(await legit);
    const codes =
      (flood as unknown as { statusCodeStats?: Record<string, { count: number }> })
        .statusCodeStats ?? {};
    return {
      label,
      sent: flood.requests.total,
      perSecond: flood.requests.total / (flood.duration || 1),
      lookedUp: codes["401"]?.count ?? 0,
      refusedEarly: codes["429"]?.count ?? 0,
      idle,
      flooded,
    };
  } finally {
    await server.stop();
  }
}

export async function httpAuthFlood(sizes: HttpSizes = httpSizes()): Promise<BenchResult> {
  const off = await floodRun("budget off (before issue 10)", 0, sizes);
  const on = await floodRun("as shipped (10/s, burst 100)", undefined, sizes);
  // The budget allows its burst plus its rate over the run, and no more.
  const allowed = 100 + 10 * sizes.createSeconds + 10;
  return {
    name: "http-auth-flood",
    title: `Failed-authentication flood (scale ${sizes.scale}; loopback, servers in their own processes, SQLite)`,
    goals: [
      {
        metric: "bad keys looked up (hash + key-store read) during the flood",
        value: `${on.lookedUp} of ${on.sent} (${pct(on.lookedUp, on.sent)})`,
        goal: `<= ${allowed} (burst + rate x s)`,
        baseline: `${off.lookedUp} of ${off.sent} (${pct(off.lookedUp, off.sent)}) budget off`,
        ratio: `${fmt(on.lookedUp / Math.max(1, on.sent) / (off.lookedUp / Math.max(1, off.sent)), 3)}x per request`,
        pass: on.lookedUp <= allowed,
      },
      {
        metric: "legitimate client's p99 under the flood (other address)",
        value: `${fmt(on.flooded.p99)} ms`,
        goal: "info",
        baseline: `${fmt(on.idle.p99)} ms idle; ${fmt(off.flooded.p99)} ms budget off`,
        ratio: `${fmt(on.flooded.p99 / Math.max(0.001, off.flooded.p99))}x of budget off`,
        pass: null,
      },
    ],
    details: [
      {
        title: "#### Per server",
        headers: [
          "server",
          "flood requests",
          "flood req/s",
          "401 (looked up)",
          "429 (refused first)",
          "legit p50 idle",
          "legit p99 idle",
          "legit n under flood",
          "legit p50 flood",
          "legit p99 flood",
        ],
        rows: [off, on].map((r) => [
          r.label,
          r.sent,
          rate(r.perSecond),
          r.lookedUp,
          r.refusedEarly,
          fmt(r.idle.p50),
          fmt(r.idle.p99),
          r.flooded.n,
          fmt(r.flooded.p50),
          fmt(r.flooded.p99),
        ]),
      },
    ],
    notes: [
      "The flood comes from 127.0.0.1 and the legitimate client from 127.0.0.2: the budget is per client address, so a flood also refuses valid keys sent from its own address (documented in docs/http-api.md).",
      "On SQLite a key lookup is an in-process indexed read, so the saving shows mostly in the count of lookups; against PostgreSQL each avoided lookup is a round trip to the database.",
      "The load generator and the servers share this machine's cores.",
    ],
  };
}
