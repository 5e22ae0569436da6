import { request as httpRequest, Agent } from "node:http";
import fc from "fast-check";
import { ManualClock } from "../../src/core/clock.js";
import type { Job } from "../../src/core/job.js";
import {
  startReceiver,
  startTestService,
  type Receiver,
  type TestService,
} from "../service/helpers.js";

/**
 * What the fuzz suites share: how many requests to send and from which seed, a real service
 * on 127.0.0.1 over a fresh SQLite file with a few jobs in every state, a raw HTTP client,
 * a cheap snapshot of the store and the per-answer invariants.
 *
 * The service runs on a ManualClock that the suites never advance once seeding is done:
 * nothing fires or expires while requests are sent, so the store changes only through
 * requests, and a refused request must leave the snapshot exactly as it was.
 */

/** Requests of one whole run (`npm test`: a few thousand; `npm run bench:fuzz`: 50,000). */
export const FUZZ_REQUESTS = intFromEnv("FUZZ_REQUESTS", 3000);
/**
 * The seed (printed on failure): 1 unless given, so `npm test` is the same run every time;
 * `FUZZ_SEED=random` draws one (`npm run bench:fuzz` does). A drawn seed once gave a run in
 * which none of about 140 task.create calls was valid, and the suite's check that some are
 * failed CI.
 */
export const FUZZ_SEED =
  process.env.FUZZ_SEED === "random"
    ? Math.floor(Math.random() * 2 ** 31)
    : intFromEnv("FUZZ_SEED", 1);

/** This suite's share of the run: `share` of FUZZ_REQUESTS. */
export function runsFor(share: number): number {
  return Math.max(1, Math.round(FUZZ_REQUESTS * share));
}

/** A generous per-suite timeout: up to 250 ms a request on this 2-core machine, plus setup. */
export function timeoutFor(runs: number): number {
  return 60_000 + runs * 250;
}

function intFromEnv(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === "") return dflt;
  if (!/^\d{1,10}$/.test(v)) throw new Error(`${name}: expected a non-negative integer, got ${v}`);
  return Number(v);
}

/**
 * Runs `property` `runs` times from FUZZ_SEED without shrinking (the service is stateful: a
 * replay is not the same request), and on failure says how to reproduce it.
 */
export async function fuzz<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  runs: number,
  check: (value: T) => Promise<void>,
): Promise<{ runs: number; ms: number }> {
  const started = performance.now();
  try {
    await fc.assert(fc.asyncProperty(arbitrary, check), {
      seed: FUZZ_SEED,
      numRuns: runs,
      endOnFailure: true,
    });
  } catch (err) {
    throw new Error(
      `${name}: fuzz failure; reproduce with FUZZ_SEED=${FUZZ_SEED} FUZZ_REQUESTS=${FUZZ_REQUESTS}\n${(err as Error).message}`,
      { cause: err },
    );
  }
  return { runs, ms: performance.now() - started };
}

export interface FuzzService extends TestService {
  clock: ManualClock;
  receiver: Receiver;
  /** Jobs seeded before fuzzing, by name (ids the generators aim at). */
  seeded: { pending: Job; dead: Job; succeeded: Job; other: Job };
  /** Ids of jobs that exist (seeded and created by requests so far). */
  knownIds: string[];
}

/** The service, with acme jobs pending, dead and succeeded and one umbrella job. */
export async function startFuzzService(): Promise<FuzzService> {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0));
  const receiver = await startReceiver((req) => ({ status: req.url.includes("gone") ? 410 : 200 }));
  const t = await startTestService({
    clock,
    scheduler: { maxAttempts: 1, maxIdleMs: 3_600_000, leaseSweepIntervalMs: 3_600_000 },
  });
  const s = t.svc.scheduler;
  const now = clock.now();
  const make = (tenant: string, dueAt: number, target: string, key?: string) =>
    s.schedule({ tenant, dueAt, target, payload: { seeded: true }, ...(key ? { key } : {}) });
  const dead = await make("acme", now + 10, receiver.url.replace("/hook", "/gone"));
  const succeeded = await make("acme", now + 20, receiver.url);
  await clock.advance(1000);
  await s.idle();
  const pending = await make("acme", now + 86_400_000, receiver.url, "seeded-key");
  const other = await make("umbrella", now + 86_400_000, receiver.url);
  const seeded = {
    pending: pending.job,
    dead: (await s.get(dead.job.id))!,
    succeeded: (await s.get(succeeded.job.id))!,
    other: other.job,
  };
  if (seeded.dead.status !== "dead" || seeded.succeeded.status !== "succeeded") {
    throw new Error(`seeding: got ${seeded.dead.status} and ${seeded.succeeded.status}`);
  }
  return {
    ...t,
    clock,
    receiver,
    seeded,
    knownIds: [seeded.pending.id, seeded.dead.id, seeded.succeeded.id, seeded.other.id],
    async close() {
      await t.close();
      await receiver.close();
    },
  };
}

/**
 * The store as one comparable string: counts by state (the store's counters), every job
 * of both tenants with its state, version and due time, every recurring series with
 * its state, version and pending occurrence, and every pause with its resume time. Cheap while the store holds a
 * few hundred jobs, as it does here.
 */
export async function snapshot(t: FuzzService): Promise<string> {
  const s = t.svc.scheduler;
  const stats = await s.stats({ buckets: 0 });
  const parts: string[] = [JSON.stringify(stats.counts)];
  for (const tenant of ["acme", "umbrella"]) {
    let cursor: string | undefined;
    do {
      const page = await s.list({ tenant, limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const j of page.jobs) parts.push(`${j.id}:${j.status}:${j.version}:${j.dueAt}:${j.key}`);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    let after: string | undefined;
    do {
      const page = await s.listSchedules({
        tenant,
        limit: 1000,
        ...(after ? { cursor: after } : {}),
      });
      for (const x of page.schedules) parts.push(`${x.id}:${x.state}:${x.version}:${x.nextJobId}`);
      after = page.nextCursor ?? undefined;
    } while (after);
    // What requests change (a pause made, resumed); holding and giving back go on after the
    // answer, and change no job here: every job is due in the future and the clock stands.
    const pauses = await s.listPauses({ tenant, states: ["active", "resuming", "resumed"] });
    for (const p of pauses) parts.push(`${p.id}:${p.onResume}:${p.resumedAt}`);
  }
  return parts.join("\n");
}

export interface RawRequest {
  method: string;
  /** Path and query string, sent as is. */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/**
 * One request over node:http (any method, any path bytes, body as given). An event stream
 * answering 200 is closed once its headers arrive: only its status and type are checked.
 */
export async function send(base: string, r: RawRequest, timeoutMs = 10_000): Promise<RawAnswer> {
  try {
    return await sendOnce(base, r, timeoutMs, agent);
  } catch (err) {
    // A kept-alive socket the server closed (after refusing a body, say) fails the next
    // request on it before the server sees it; Node's documented remedy is to retry.
    if (!(err as { reusedSocket?: boolean }).reusedSocket) throw err;
    return sendOnce(base, r, timeoutMs, false);
  }
}

function sendOnce(
  base: string,
  r: RawRequest,
  timeoutMs: number,
  via: Agent | false,
): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: r.path,
        // Node sends a DELETE's (or OPTIONS') body without a length unless told: the server
        // would read it as the next request. Every body goes with its length.
        headers:
          r.body === undefined ? r.headers : { "content-length": bodyLength(r.body), ...r.headers },
        agent: via,
        timeout: timeoutMs,
      },
      (res) => {
        const type = String(res.headers["content-type"] ?? "");
        if (type.startsWith("text/event-stream")) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: "" });
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    if (r.body !== undefined) req.end(r.body);
    else req.end();
  });
}

function bodyLength(body: string | Buffer): number {
  return typeof body === "string" ? Buffer.byteLength(body) : body.length;
}

/** Describes a request for a failure message (long strings shortened). */
export function describeRequest(r: RawRequest): string {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}... (${s.length} chars)` : s);
  const body = r.body === undefined ? "" : `\n  body: ${cut(String(r.body))}`;
  return `${r.method} ${cut(r.path)}\n  headers: ${cut(JSON.stringify(r.headers))}${body}`;
}

/**
 * The answer invariants: no 5xx; every 4xx is JSON in the one error shape, `{ error: { code,
 * field, expected, received, message } }`, all strings, the field and code not empty.
 * Returns the problem, or null.
 */
export function answerProblem(a: RawAnswer, method: string): string | null {
  if (a.status >= 500) return `answered ${a.status}`;
  // a HEAD answer has no body to check
  if (a.status < 400 || method === "HEAD") return null;
  const type = String(a.headers["content-type"] ?? "");
  if (!type.startsWith("application/json")) return `${a.status} with content-type "${type}"`;
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return `${a.status} with a body that is not JSON`;
  }
  const e = (body as { error?: Record<string, unknown> } | null)?.error;
  if (typeof e !== "object" || e === null) return `${a.status} without an error object`;
  for (const k of ["code", "field", "expected", "received", "message"]) {
    if (typeof e[k] !== "string") return `${a.status}: error.${k} is not a string`;
  }
  if (e.code === "" || e.field === "") return `${a.status}: empty error.code or error.field`;
  return null;
}
