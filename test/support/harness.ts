import { join } from "node:path";
import pino from "pino";
import { afterAll, describe } from "vitest";
import { Scheduler } from "../../src/api/scheduler.js";
import type { SchedulerEvents } from "../../src/api/scheduler.js";
import { ManualClock, settle } from "../../src/core/clock.js";
import type { SchedulerOptions } from "../../src/engine/options.js";
import type { Store } from "../../src/store/store.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import {
  dropCreatedSchemas,
  freshSchema,
  startPostgres,
  type PostgresServer,
} from "./postgres-server.js";
import { tempDir } from "./temp-dir.js";

export const silentLogger = pino({ level: "silent" });

export type HarnessOptions = Partial<Omit<SchedulerOptions, "store" | "clock">> & {
  bucketWidthMs?: number;
  start?: number;
};

const T_START = Date.UTC(2026, 2, 1, 10, 0, 0);

/** A Scheduler on a fresh SQLite file, driven by a ManualClock. */
export function makeHarness(opts: HarnessOptions = {}) {
  const dir = tempDir();
  const { bucketWidthMs, start, ...schedulerOpts } = opts;
  const store = new SqliteStore({
    path: join(dir.path, "jobs.db"),
    ...(bucketWidthMs ? { bucketWidthMs } : {}),
  });
  const clock = new ManualClock(start ?? T_START);
  const scheduler = new Scheduler({ store, clock, logger: silentLogger, ...schedulerOpts });
  return {
    store,
    clock,
    scheduler,
    dir: dir.path,
    async close() {
      await scheduler.stop({ timeoutMs: 1000 });
      await store.close();
      dir.cleanup();
    },
  };
}

/** The stores the engine tests run on. */
export type StoreName = "sqlite" | "postgres";

/** A Scheduler on a fresh store of one kind, driven by a ManualClock. */
export interface Harness {
  readonly storeName: StoreName;
  readonly store: Store;
  readonly clock: ManualClock;
  readonly scheduler: Scheduler;
  close(): Promise<void>;
}

export type MakeHarness = (opts?: HarnessOptions) => Promise<Harness>;

/**
 * Runs `body` once per store, as `title [sqlite]` and `title [postgres]`, each of its tests
 * on a fresh store from `make` (a new SQLite file, or a new PostgreSQL schema), as Oban runs
 * its engine tests per engine. Call it at the top level of a test file: the file's first
 * call starts one PostgreSQL server (test/support/postgres-server.ts) that all its tests
 * share, stopped when the file ends.
 *
 * PostgreSQL answers over a socket, so a few turns of the event loop are not enough for a
 * pass a timer started to finish: the clock's `settle` waits until no store call is in
 * flight (see trackCalls). The store's clock-skew check is left out (the database's clock
 * is real time, the test's is not). The store's node services (shard leases, LISTEN/NOTIFY,
 * partition maintenance) are not started: `shards` is given (every shard), so the engine
 * alone drives the store; test/postgres covers the node services.
 */
export function describeOnEveryStore(
  title: string,
  body: (make: MakeHarness, storeName: StoreName) => void,
): void {
  describe(`${title} [sqlite]`, () => body(makeSqlite, "sqlite"));
  describe(`${title} [postgres]`, () => {
    postgresUsers++;
    afterAll(releasePostgres);
    body(makePostgres, "postgres");
  });
}

async function makeSqlite(opts: HarnessOptions = {}): Promise<Harness> {
  return { storeName: "sqlite", ...makeHarness(opts) };
}

/** The file's PostgreSQL server, started by the first test that needs it. */
let server: Promise<PostgresServer> | null = null;
/** PostgreSQL blocks of this file not yet finished: the last one stops the server. */
let postgresUsers = 0;

function postgresServer(): Promise<PostgresServer> {
  server ??= startPostgres();
  return server;
}

async function releasePostgres(): Promise<void> {
  if (--postgresUsers > 0 || !server) return;
  const s = await server;
  server = null;
  await dropCreatedSchemas(s.url);
  await s.stop();
}

async function makePostgres(opts: HarnessOptions = {}): Promise<Harness> {
  const { url } = await postgresServer();
  const { bucketWidthMs, start, ...schedulerOpts } = opts;
  const opened = await PostgresStore.open({
    url,
    schema: freshSchema("engine"),
    poolSize: 4,
    ...(bucketWidthMs ? { bucketWidthMs } : {}),
  });
  const store: PostgresStore = opened;
  const idle = trackCalls(store);
  // The database's clock is real time, the test's is not: the skew check has its own test
  // (test/postgres/clock-skew.test.ts) and is left out here, as for a store without it.
  Object.defineProperty(store, "clockRead", { value: undefined });
  const clock = new ManualClock(start ?? T_START, { settle: idle });
  const scheduler = new Scheduler({
    store,
    clock,
    logger: silentLogger,
    shards: () => undefined,
    ...schedulerOpts,
  });
  return {
    storeName: "postgres",
    store,
    clock,
    scheduler,
    async close() {
      await scheduler.stop({ timeoutMs: 1000 });
      await store.close();
    },
  };
}

/**
 * Counts `store`'s method calls while their promises are pending (each method of its class
 * is wrapped on the instance) and returns `idle()`, which resolves once no call has been in
 * flight across a few turns of the event loop (a call's continuation may start the next).
 * A method a test replaces afterwards is not counted itself, only the real calls it makes:
 * a test that holds a write back on purpose does not make `idle()` wait for it.
 */
export function trackCalls(store: object): () => Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  wrapCalls(store, inFlight);
  // the store's pause member (PauseStore): its keeper's passes are store calls too
  const pauses = (store as { pauses?: unknown }).pauses;
  if (pauses && typeof pauses === "object") wrapCalls(pauses, inFlight);
  return async () => {
    for (let quiet = 0; quiet < 2;) {
      await settle();
      if (inFlight.size === 0) {
        quiet++;
      } else {
        quiet = 0;
        await Promise.allSettled([...inFlight]);
      }
    }
  };
}

/** Wraps each method of `store`'s classes on the instance, adding its pending promises to `inFlight`. */
function wrapCalls(store: object, inFlight: Set<Promise<unknown>>): void {
  const target = store as Record<string, unknown>;
  for (let proto = Object.getPrototypeOf(store); proto && proto !== Object.prototype;) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method: unknown = Reflect.get(proto, name);
      if (name === "constructor" || typeof method !== "function" || Object.hasOwn(store, name))
        continue;
      target[name] = (...args: unknown[]): unknown => {
        const out: unknown = (method as (...a: unknown[]) => unknown).apply(store, args);
        if (out instanceof Promise) {
          inFlight.add(out);
          const done = () => inFlight.delete(out);
          out.then(done, done);
        }
        return out;
      };
    }
    proto = Object.getPrototypeOf(proto);
  }
}

/** Records every event of the given kinds, in order. */
export function record<K extends keyof SchedulerEvents>(scheduler: Scheduler, ...kinds: K[]) {
  const events: { kind: K; args: SchedulerEvents[K][0] }[] = [];
  for (const kind of kinds) {
    scheduler.on(kind, ((arg: SchedulerEvents[K][0]) => events.push({ kind, args: arg })) as never);
  }
  return events;
}

/**
 * Runs the started scheduler over `at`, as a process that slept until just before it sees it:
 * the clock is set 2 s before `at` (unless already later), advanced 3 s, and the scheduler
 * left to settle what fired.
 */
export async function runOver(h: Harness, at: number): Promise<void> {
  if (h.clock.now() < at - 2000) h.clock.set(at - 2000);
  await h.clock.advance(3000);
  await h.scheduler.idle();
}
