import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ServiceOptions } from "../src/service/service.js";

/** Sizes of the HTTP benchmarks: BENCH_SCALE=tiny is the CI smoke run. */
export interface HttpSizes {
  readonly scale: "tiny" | "full";
  /** How long autocannon hammers POST /v1/jobs, seconds (bounded by `createMax` too). */
  readonly createSeconds: number;
  /** Most single-job requests sent. */
  readonly createMax: number;
  /** Batch requests of 1000 jobs sent. */
  readonly batchRequests: number;
  /** Jobs of the precision run, due across `webhookWindowMs`. */
  readonly webhookJobs: number;
  readonly webhookWindowMs: number;
  /** Jobs of the burst run, all due at the same instant. */
  readonly burstJobs: number;
  /** Fairness run: tenant a's jobs, all due at once, to a receiver answering in `fairSlowMs`. */
  readonly fairSlowJobs: number;
  readonly fairSlowMs: number;
  /** Fairness run: tenant b's jobs to a fast receiver, due while a's run. */
  readonly fairFastJobs: number;
}

export function httpSizes(env: NodeJS.ProcessEnv = process.env): HttpSizes {
  const scale = env.BENCH_SCALE ?? "full";
  if (scale === "tiny") {
    return {
      scale,
      createSeconds: 2,
      createMax: 2000,
      batchRequests: 3,
      webhookJobs: 300,
      webhookWindowMs: 1000,
      burstJobs: 500,
      fairSlowJobs: 500,
      fairSlowMs: 1000,
      fairFastJobs: 10,
    };
  }
  if (scale === "full") {
    return {
      scale,
      createSeconds: 10,
      createMax: 200_000,
      batchRequests: 50,
      webhookJobs: 10_000,
      webhookWindowMs: 10_000,
      burstJobs: 20_000,
      fairSlowJobs: 1000,
      fairSlowMs: 2500,
      fairFastJobs: 50,
    };
  }
  throw new Error(`BENCH_SCALE: expected "tiny" or "full", got ${JSON.stringify(scale)}`);
}

export interface BenchServer {
  url: string;
  /** The first tenant's key and signing secret. */
  key: string;
  secret: string;
  /** Every tenant's key and signing secret. */
  tenants: Record<string, { key: string; secret: string }>;
  stop(): Promise<void>;
}

/** What bench/http-server.ts starts (JSON on its command line). */
export interface BenchServerConfig {
  /** Scheduler concurrency. Default 200. */
  readonly concurrency?: number;
  /** Tenants, an API key each. Default ["bench"]. */
  readonly tenants?: readonly string[];
  /** More service options (JSON-able ones), merged over the bench defaults. */
  readonly service?: Partial<Omit<ServiceOptions, "db" | "clock" | "logDestination">>;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Starts bench/http-server.ts in a child process on a fresh SQLite file. */
export async function startBenchServer(
  config: number | BenchServerConfig = 200,
): Promise<BenchServer> {
  const cfg: BenchServerConfig = typeof config === "number" ? { concurrency: config } : config;
  const dir = mkdtempSync(join(tmpdir(), "duetime-http-bench-"));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "bench/http-server.ts"),
      join(dir, "jobs.db"),
      JSON.stringify(cfg),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const info = await new Promise<Omit<BenchServer, "stop">>((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error("bench server did not start")), 30_000);
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      const line = buf.split("\n")[0];
      if (buf.includes("\n") && line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as Omit<BenchServer, "stop">);
      }
    });
    child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return {
    ...info,
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** POSTs JSON with the key (default: the first tenant's); resolves to the status and body. */
export async function postJson(
  server: BenchServer,
  path: string,
  body: unknown,
  key: string = server.key,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

export async function getJson(
  server: BenchServer,
  path: string,
  key: string = server.key,
): Promise<unknown> {
  const res = await fetch(server.url + path, {
    headers: { authorization: `Bearer ${key}` },
  });
  return res.json() as Promise<unknown>;
}
