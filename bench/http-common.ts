import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
    };
  }
  throw new Error(`BENCH_SCALE: expected "tiny" or "full", got ${JSON.stringify(scale)}`);
}

export interface BenchServer {
  url: string;
  key: string;
  secret: string;
  stop(): Promise<void>;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Starts bench/http-server.ts in a child process on a fresh SQLite file. */
export async function startBenchServer(concurrency = 200): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), "duetime-http-bench-"));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "bench/http-server.ts"),
      join(dir, "jobs.db"),
      String(concurrency),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const info = await new Promise<{ url: string; key: string; secret: string }>(
    (resolve, reject) => {
      let buf = "";
      const timer = setTimeout(() => reject(new Error("bench server did not start")), 30_000);
      child.stdout!.on("data", (d: Buffer) => {
        buf += d.toString();
        const line = buf.split("\n")[0];
        if (buf.includes("\n") && line) {
          clearTimeout(timer);
          resolve(JSON.parse(line) as { url: string; key: string; secret: string });
        }
      });
      child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
    },
  );
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

/** POSTs JSON with the key; resolves to the status and parsed body. */
export async function postJson(
  server: BenchServer,
  path: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

export async function getJson(server: BenchServer, path: string): Promise<unknown> {
  const res = await fetch(server.url + path, {
    headers: { authorization: `Bearer ${server.key}` },
  });
  return res.json() as Promise<unknown>;
}
