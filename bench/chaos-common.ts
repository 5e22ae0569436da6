/**
 * Pieces of the chaos runs (bench/chaos.ts): their sizes, a loopback webhook receiver that
 * records every delivery, real `duetime serve` processes (dist/cli/main.js) to start, kill
 * and restart, job creation, and the counts every scenario prints.
 * Everything runs on 127.0.0.1.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { Scheduler } from "../src/api/scheduler.js";
import { openStore } from "../src/stores/open-store.js";
import { ascending, percentile } from "./lib/stats.js";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(ROOT, "dist/cli/main.js");

/** Sizes of the chaos runs: CHAOS_SCALE=tiny is the smoke run (well under a minute). */
export interface ChaosSizes {
  readonly scale: "tiny" | "full";
  /** SQLite: jobs due across the window, and SIGKILL + restart cycles during it. */
  readonly sqlite: { jobs: number; windowMs: number; kills: number };
  /** PostgreSQL, three nodes: jobs due across the window. */
  readonly postgres: { jobs: number; windowMs: number };
  /** Shutdown: jobs due across the window to a receiver slower than the stop timeout. */
  readonly shutdown: { jobs: number; windowMs: number; receiverDelayMs: number };
}

export function chaosSizes(env: NodeJS.ProcessEnv = process.env): ChaosSizes {
  const scale = env.CHAOS_SCALE ?? "full";
  if (scale === "tiny") {
    return {
      scale,
      sqlite: { jobs: 1500, windowMs: 8000, kills: 2 },
      postgres: { jobs: 1500, windowMs: 12_000 },
      shutdown: { jobs: 300, windowMs: 2000, receiverDelayMs: 1000 },
    };
  }
  if (scale === "full") {
    return {
      scale,
      sqlite: { jobs: 20_000, windowMs: 60_000, kills: 10 },
      postgres: { jobs: 30_000, windowMs: 90_000 },
      shutdown: { jobs: 2000, windowMs: 6000, receiverDelayMs: 2000 },
    };
  }
  throw new Error(`CHAOS_SCALE: expected "tiny" or "full", got ${JSON.stringify(scale)}`);
}

/** One delivery as the receiver saw it (its clock: the same machine's). */
export interface Arrival {
  readonly id: string;
  readonly dueAt: number;
  /** The delivery's attempt number (the body's `attempt`: 1 for a first claim). */
  readonly attempt: number;
  /** When the request's headers arrived (epoch ms). */
  readonly at: number;
}

/** A webhook receiver on 127.0.0.1 that records every delivery and answers after `delayMs`. */
export class Receiver {
  readonly arrivals: Arrival[] = [];
  delayMs = 0;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    let self: Receiver | null = null;
    const server = createServer((req, res) => {
      const at = Date.now();
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          id: string;
          dueAt: string;
          attempt: number;
        };
        self!.arrivals.push({
          id: body.id,
          dueAt: Date.parse(body.dueAt),
          attempt: body.attempt,
          at,
        });
        const answer = () => res.writeHead(204).end();
        if (self!.delayMs > 0) setTimeout(answer, self!.delayMs);
        else answer();
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    self = new Receiver(server, `http://127.0.0.1:${port}/hook`);
    return self;
  }

  /** Distinct jobs delivered so far. */
  delivered(): Set<string> {
    return new Set(this.arrivals.map((a) => a.id));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** A `duetime serve` child process. */
export class ServeProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    readonly exited: Promise<number | null>,
  ) {}

  /** Starts `duetime serve` on `db` and resolves once it listens. */
  static async start(o: {
    db: string;
    nodeName?: string;
    concurrency?: number;
    stopTimeoutMs?: number;
    /** pino level of its log (stderr, of which the last 4,000 characters are kept). Default error. */
    logLevel?: string;
    /** A file its whole log (stderr) is appended to. Default: none. */
    logTo?: string;
  }): Promise<ServeProcess> {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
    const args = [
      CLI,
      "serve",
      "--db",
      o.db,
      "--port",
      "0",
      "--allow-private-targets",
      "--rate-limit",
      "0",
      "--log-level",
      o.logLevel ?? "error",
      "--concurrency",
      String(o.concurrency ?? 100),
      ...(o.nodeName ? ["--node-name", o.nodeName] : []),
      ...(o.stopTimeoutMs === undefined ? [] : ["--stop-timeout", String(o.stopTimeoutMs)]),
    ];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => {
      if (o.logTo !== undefined) appendFileSync(o.logTo, d);
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 30_000);
      child.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /listening on (\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`serve exited with ${code}: ${stderr}`));
      });
    });
    return new ServeProcess(child, url, exited);
  }

  /** Sends `signal` and resolves when the process has exited (with its exit code). */
  async kill(signal: NodeJS.Signals): Promise<number | null> {
    this.child.kill(signal);
    return this.exited;
  }
}

/**
 * Creates one webhook job of `tenant` per due time, straight into the store (the library's
 * scheduleMany, as the HTTP API would, without its cost: on a busy machine creating tens of
 * thousands over HTTP eats into the window the jobs are due in). Resolves to their ids.
 */
export async function createJobs(
  db: string,
  tenant: string,
  target: string,
  dueTimes: readonly number[],
): Promise<string[]> {
  const store = await openStore(db);
  const scheduler = new Scheduler({ store, logger: pino({ level: "silent" }) });
  try {
    const ids: string[] = [];
    for (let i = 0; i < dueTimes.length; i += 5000) {
      const made = await scheduler.scheduleMany(
        dueTimes.slice(i, i + 5000).map((dueAt, j) => ({
          tenant,
          dueAt,
          target,
          payload: { n: i + j },
        })),
      );
      ids.push(...made.map((m) => m.job.id));
    }
    return ids;
  } finally {
    await scheduler.close();
  }
}

/** Jobs `count` spread evenly over [start, start + windowMs). */
export function spread(count: number, start: number, windowMs: number): number[] {
  return Array.from({ length: count }, (_, i) => start + Math.floor((i * windowMs) / count));
}

/** The counts every scenario prints. */
export interface Counts {
  created: number;
  delivered: number;
  lost: number;
  duplicates: number;
  early: number;
  latenessP50: number;
  latenessP99: number;
}

/** Counts over all jobs: a job's lateness is its first delivery's arrival minus its due time. */
export function countsOf(created: readonly string[], arrivals: readonly Arrival[]): Counts {
  const first = firstArrivals(arrivals);
  const lateness = ascending([...first.values()].map((a) => a.at - a.dueAt));
  return {
    created: created.length,
    delivered: created.filter((id) => first.has(id)).length,
    lost: created.filter((id) => !first.has(id)).length,
    duplicates: arrivals.length - first.size,
    early: arrivals.filter((a) => a.at < a.dueAt).length,
    latenessP50: percentile(lateness, 50),
    latenessP99: percentile(lateness, 99),
  };
}

/** Each job's first delivery. */
export function firstArrivals(arrivals: readonly Arrival[]): Map<string, Arrival> {
  const first = new Map<string, Arrival>();
  for (const a of arrivals) if (!first.has(a.id)) first.set(a.id, a);
  return first;
}

/** A job a killed process held: when it was killed and when its restart listened again. */
export interface Held {
  readonly killedAt: number;
  readonly backAt: number;
}

/**
 * The jobs a killed process held and had not delivered, each by its first delivery after
 * the kill: `lateness` is that arrival minus the due time; `afterBack` the arrival minus
 * the later of the due time and the moment the restarted process listened (what the
 * restart itself cost is not duetime's to win back). Both ascending, in ms.
 */
export function heldLateness(
  held: ReadonlyMap<string, Held>,
  arrivals: readonly Arrival[],
): { lateness: number[]; afterBack: number[] } {
  const byId = new Map<string, Arrival[]>();
  for (const a of arrivals) {
    if (held.has(a.id)) byId.set(a.id, [...(byId.get(a.id) ?? []), a]);
  }
  const lateness: number[] = [];
  const afterBack: number[] = [];
  for (const [id, h] of held) {
    const mine = byId.get(id) ?? [];
    // delivered before the kill: a duplicate, counted as such
    if (mine.some((a) => a.at < h.killedAt)) continue;
    const after = mine.find((a) => a.at >= h.killedAt);
    if (!after) continue;
    lateness.push(after.at - after.dueAt);
    afterBack.push(after.at - Math.max(after.dueAt, h.backAt));
  }
  return { lateness: ascending(lateness), afterBack: ascending(afterBack) };
}

/** Waits until `cond()` or `timeoutMs`; resolves to whether it held. */
export async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** Sleeps until the wall clock reaches `at`. */
export async function sleepUntil(at: number): Promise<void> {
  const ms = at - Date.now();
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}

export function ms(n: number): string {
  return Number.isFinite(n) ? `${Math.round(n)} ms` : "n/a";
}
