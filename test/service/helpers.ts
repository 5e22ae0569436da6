import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createApiKey, openKeyStore } from "../../src/service/keys.js";
import {
  startService,
  type RunningService,
  type ServiceOptions,
} from "../../src/service/service.js";
import { tempDir } from "../support/temp-dir.js";

export interface Tenant {
  tenant: string;
  key: string;
  keyId: string;
  secret: string;
}

export interface TestService {
  svc: RunningService;
  db: string;
  acme: Tenant;
  umbrella: Tenant;
  api: (method: string, path: string, opts?: ApiOptions) => Promise<ApiResult>;
  close(): Promise<void>;
}

export interface ApiOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is (not JSON-encoded). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface ApiResult {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * A real server on 127.0.0.1 (ephemeral port) over a fresh SQLite file, with two tenants
 * (acme, umbrella) and a key each. Loopback webhook targets are allowed unless told otherwise.
 */
export async function startTestService(opts: Partial<ServiceOptions> = {}): Promise<TestService> {
  const dir = tempDir("duetime-service-");
  const db = opts.db ?? join(dir.path, "jobs.db");
  const keys = await openKeyStore(db);
  const acmeKey = await createApiKey(keys, "acme");
  const umbrellaKey = await createApiKey(keys, "umbrella");
  await keys.close();
  const svc = await startService({
    port: 0,
    allowPrivateTargets: true,
    logLevel: "silent",
    rateLimit: { perSecond: 0 },
    ...opts,
    db,
    scheduler: { backoffBaseMs: 20, backoffMaxMs: 200, ...opts.scheduler },
  });
  const api = async (method: string, path: string, o: ApiOptions = {}): Promise<ApiResult> => {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? acmeKey.key : o.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined && headers["content-type"] === undefined) {
      headers["content-type"] = "application/json";
    }
    const res = await fetch(svc.url + path, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON (metrics): keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
  return {
    svc,
    db,
    acme: { tenant: "acme", key: acmeKey.key, keyId: acmeKey.id, secret: acmeKey.signingSecret },
    umbrella: {
      tenant: "umbrella",
      key: umbrellaKey.key,
      keyId: umbrellaKey.id,
      secret: umbrellaKey.signingSecret,
    },
    api,
    async close() {
      await svc.close();
      dir.cleanup();
    },
  };
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves with the n-th request (1-based) once it has arrived. */
  nth(n: number, timeoutMs?: number): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1. `respond` decides each answer (default 200); it may
 * delay. Every request is recorded with its raw body.
 */
export async function startReceiver(
  respond: (
    req: ReceivedRequest,
    index: number,
  ) =>
    | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
    | Promise<{
        status: number;
        headers?: Record<string, string>;
        body?: string;
        delayMs?: number;
      }> = () => ({
    status: 200,
  }),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: ReceivedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(r);
      for (const w of waiters.splice(0)) w();
      void Promise.resolve(respond(r, requests.length)).then(async (a) => {
        if (a.delayMs) await new Promise((d) => setTimeout(d, a.delayMs));
        if (res.destroyed) return;
        res.writeHead(a.status, { "content-type": "text/plain", ...a.headers });
        res.end(a.body ?? "");
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    nth(n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver: request ${n} did not arrive (got ${requests.length})`)),
          timeoutMs,
        );
        const check = (): void => {
          const r = requests[n - 1];
          if (r) {
            clearTimeout(timer);
            resolve(r);
          } else {
            waiters.push(check);
          }
        };
        check();
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** Polls GET /v1/jobs/:id until `done(job)` holds; returns that job view. */
export async function waitForJob(
  t: TestService,
  id: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  done: (job: any) => boolean,
  opts: { key?: string; timeoutMs?: number } = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  for (;;) {
    const r = await t.api("GET", `/v1/jobs/${id}`, opts.key ? { key: opts.key } : {});
    if (r.status === 200 && done(r.body.job)) return r.body.job;
    if (Date.now() > deadline) {
      throw new Error(`job ${id} never reached the expected state: ${JSON.stringify(r.body)}`);
    }
    await new Promise((res) => setTimeout(res, 20));
  }
}
