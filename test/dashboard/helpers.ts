import Fastify, { type FastifyInstance } from "fastify";
import { build } from "vite";
import type { Job } from "../../src/core/job.js";
import { dashboardPlugin } from "../../src/dashboard/plugin.js";
import type { EventStreamOptions } from "../../src/dashboard/events.js";
import { securityHeaders } from "../../src/http/security-headers.js";
import { join } from "node:path";
import { Scheduler } from "../../src/api/scheduler.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { makeHarness, silentLogger, type HarnessOptions } from "../support/harness.js";
import { tempDir } from "../support/temp-dir.js";

export const HOUR = 3_600_000;
/** Test-only keys; the real key store belongs to the service. */
export const KEYS: Readonly<Record<string, string>> = {
  "key-acme": "acme",
  "key-globex": "globex",
};

/** The clock starts at a whole hour + 10 min of real time, so dates on screen look natural. */
export const T0 = Math.floor(Date.now() / HOUR) * HOUR + 10 * 60_000;

/** Builds the front end into a temp folder (what `npm run build` ships in dist/dashboard/web). */
export async function buildFrontEnd(): Promise<{ dir: string; cleanup: () => void }> {
  const out = tempDir("duetime-dashboard-web-");
  await build({
    configFile: new URL("../../web/dashboard/vite.config.ts", import.meta.url).pathname,
    logLevel: "silent",
    build: { outDir: out.path, emptyOutDir: true },
  });
  return { dir: out.path, cleanup: out.cleanup };
}

export interface Seeded {
  /** acme's job with key "invoice-42", due in bucket +1h. */
  readonly invoice: Job;
  /** acme's job that went dead. */
  readonly dead: Job;
  /** acme's overdue job (two hours late). */
  readonly overdue: Job;
  /** A globex job (for isolation checks). */
  readonly globex: Job;
  /** Pending acme jobs per bucket offset in hours from the current bucket. */
  readonly acmeBuckets: Readonly<Record<number, number>>;
}

/**
 * A real fastify server on 127.0.0.1 (ephemeral port) with the service's security headers
 * (CSP included) and the dashboard plugin, and a Scheduler on a fresh SQLite file, driven by
 * a ManualClock; jobs seeded across buckets.
 */
export async function startDashboard(
  opts: {
    staticDir?: string;
    events?: EventStreamOptions;
    /** Scheduler options beside the clock's start (maxOpenPauses...). */
    scheduler?: Omit<HarnessOptions, "start">;
  } = {},
) {
  const h = makeHarness({ ...opts.scheduler, start: T0 });
  const s = h.scheduler;
  const bucket0 = Math.floor(T0 / HOUR) * HOUR;
  // Registered before seeding, so the plugin sees the seed's changes (dead counter).
  const app: FastifyInstance = Fastify({ logger: false });
  // The service's response headers, so the page is tested as the service serves it.
  await securityHeaders(app);
  await app.register(dashboardPlugin, {
    scheduler: s,
    authenticate: async (req) => {
      const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "");
      return m ? (KEYS[m[1]!] ?? null) : null;
    },
    ...(opts.staticDir ? { staticDir: opts.staticDir } : {}),
    ...(opts.events ? { events: opts.events } : {}),
  });
  const acmeBuckets: Record<number, number> = { 1: 3, 3: 5, 5: 2, 50: 7 };
  const inputs = [];
  for (const [offset, n] of Object.entries(acmeBuckets)) {
    for (let i = 0; i < n; i++) {
      inputs.push({
        tenant: "acme",
        dueAt: bucket0 + Number(offset) * HOUR + (i + 1) * 60_000,
        target: "noop",
        payload: { offset: Number(offset), i },
      });
    }
  }
  const [first] = await s.scheduleMany(inputs);
  // The invoice job replaces the first +1h job so the +1h count stays 3.
  await s.cancel(first!.job.id);
  const { job: invoice } = await s.schedule({
    tenant: "acme",
    key: "invoice-42",
    dueAt: bucket0 + HOUR + 30 * 60_000,
    target: "noop",
    payload: { invoice: 42, to: "ada@example.com" },
  });
  const { job: globex } = await s.schedule({
    tenant: "globex",
    dueAt: bucket0 + HOUR + 60_000,
    target: "noop",
  });
  for (let i = 0; i < 3; i++) {
    await s.schedule({
      tenant: "globex",
      dueAt: bucket0 + HOUR + (i + 2) * 60_000,
      target: "noop",
    });
  }
  // Fire a few now: three succeed, one has no handler and goes dead.
  s.handle("noop", () => undefined);
  for (let i = 0; i < 3; i++)
    await s.schedule({ tenant: "acme", dueAt: T0 + 100 + i, target: "noop" });
  const { job: doomed } = await s.schedule({
    tenant: "acme",
    dueAt: T0 + 200,
    target: "missing-handler",
    maxAttempts: 1,
  });
  s.start();
  await h.clock.advance(5_000);
  await s.idle();
  await s.stop();
  const dead = (await s.get(doomed.id))!;
  if (dead.status !== "dead") throw new Error(`seed: expected a dead job, got ${dead.status}`);
  const { job: overdue } = await s.schedule({
    tenant: "acme",
    dueAt: bucket0 - 2 * HOUR,
    target: "noop",
  });

  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  const base = `http://127.0.0.1:${address.port}`;
  return {
    ...h,
    app,
    base,
    bucket0,
    seeded: { invoice, dead, overdue, globex, acmeBuckets } satisfies Seeded,
    /** fetch against the server with tenant `key`. */
    async api(
      path: string,
      init: {
        method?: string;
        body?: unknown;
        key?: string | null;
        headers?: Record<string, string>;
      } = {},
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
    ): Promise<{ status: number; headers: Headers; body: any }> {
      const headers: Record<string, string> = { ...init.headers };
      const key = init.key === undefined ? "key-acme" : init.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      if (init.body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(base + path, {
        method: init.method ?? "GET",
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      const text = await res.text();
      const body: unknown = text.startsWith("{") ? JSON.parse(text) : text;
      return { status: res.status, headers: res.headers, body };
    },
    async stop() {
      await app.close();
      await h.close();
    },
  };
}

export type Dashboard = Awaited<ReturnType<typeof startDashboard>>;

/**
 * A second Scheduler on the dashboard's SQLite file and clock: another node of the same
 * store, whose changes the dashboard's process never sees as events (only in the feed).
 */
export function secondNode(d: Pick<Dashboard, "dir" | "clock">) {
  const store = new SqliteStore({ path: join(d.dir, "jobs.db") });
  const scheduler = new Scheduler({ store, clock: d.clock, logger: silentLogger });
  return {
    scheduler,
    async close() {
      await scheduler.stop({ timeoutMs: 1000 });
      await store.close();
    },
  };
}

/** The status each route answers without a key (POSTs with an empty JSON body), by path. */
export async function statusesWithoutKey(
  d: Pick<Dashboard, "api">,
  routes: readonly (readonly ["GET" | "POST", string])[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [method, path] of routes) {
    const r = await d.api(path, { method, key: null, ...(method === "POST" ? { body: {} } : {}) });
    out[`${method} ${path}`] = r.status;
  }
  return out;
}
