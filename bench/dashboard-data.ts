/**
 * The dashboard's data endpoints with a large pending backlog (issue 5: each answers in
 * under 50 ms with 10M jobs). Builds a store of `sizes.backlog` pending jobs spread over the
 * next 90 days (bench/lib bulk loader), fires a slice of recent jobs so "now" and the dead
 * scan have history to read, serves the dashboard plugin on loopback and times each endpoint
 * over real HTTP. `tsx bench/dashboard-data.ts` (BENCH_SCALE=tiny for the smoke size); the
 * store file is built under bench-data/ and deleted at the end.
 */
import Fastify from "fastify";
import pino from "pino";
import { Scheduler } from "../src/api/scheduler.js";
import { dashboardPlugin } from "../src/dashboard/plugin.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { bulkLoadPending, checkCounters } from "./lib/backlog.js";
import { scratchPath } from "./lib/data.js";
import { machineFacts } from "./lib/machine.js";
import { note } from "./lib/progress.js";
import { fmt, renderResult, type BenchResult, type GoalRow } from "./lib/report.js";
import { count, sizesFromEnv, type Sizes } from "./lib/scale.js";
import { ascending, percentile } from "./lib/stats.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const GOAL_MS = 50;
const TENANT = "default";

interface Endpoint {
  readonly name: string;
  /** A request per iteration (i counts from 0). */
  readonly request: (i: number) => { path: string; method?: string; body?: unknown };
}

export async function dashboardData(sizes: Sizes): Promise<BenchResult> {
  const backlog = sizes.backlog;
  const fired = sizes.scale === "tiny" ? 1_000 : 50_000;
  const iterations = sizes.scale === "tiny" ? 30 : 200;
  const file = scratchPath(`dashboard-${backlog}`);
  const store = new SqliteStore({ path: file.path });
  const scheduler = new Scheduler({ store, logger: pino({ level: "silent" }), maxAttempts: 1 });
  const app = Fastify({ logger: false });
  try {
    await app.register(dashboardPlugin, { scheduler, authenticate: async () => TENANT });
    const now = Date.now();
    const nextHour = now - (now % HOUR) + HOUR;
    const t0 = performance.now();
    await bulkLoadPending(store, {
      count: backlog,
      dueFrom: nextHour,
      spanMs: 90 * DAY,
      label: `dashboard backlog ${count(backlog)}`,
    });
    const check = checkCounters(store.connection);
    if (!check.ok) throw new Error("dashboard backlog: counters inconsistent");
    const loadSecs = (performance.now() - t0) / 1000;

    // History for "now" and the dead scan: recent jobs fired by this process, 1% dead.
    scheduler.handle("noop", () => undefined);
    for (let done = 0; done < fired; done += 10_000) {
      const n = Math.min(10_000, fired - done);
      await scheduler.scheduleMany(
        Array.from({ length: n }, (_, i) => ({
          dueAt: now - 1 - ((done + i) % 1000),
          target: (done + i) % 100 === 0 ? "missing-handler" : "noop",
          ...((done + i) % 500 === 0 ? { key: `recent-${done + i}` } : {}),
        })),
      );
    }
    scheduler.start();
    for (;;) {
      const c = await store.jobsCountByStatus({});
      if (c.succeeded + c.dead >= fired) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await scheduler.stop();
    // An overdue job (the oldest-overdue figure) and keyed jobs to search for.
    await scheduler.schedule({ dueAt: now - 2 * HOUR, target: "noop" });
    const keyed = await scheduler.scheduleMany(
      Array.from({ length: 100 }, (_, i) => ({
        dueAt: nextHour + 40 * DAY + i,
        target: "noop",
        key: `order-${i}`,
      })),
    );
    const victims = (
      await scheduler.list({
        status: "pending",
        dueFrom: nextHour + 60 * DAY,
        limit: 2 * iterations,
      })
    ).jobs;

    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    const base = `http://127.0.0.1:${address.port}`;
    const someId = keyed[50]!.job.id;
    const endpoints: Endpoint[] = [
      ...["1h", "1d", "7d", "30d", "90d", "365d"].map((z) => ({
        name: `future zoom=${z}`,
        request: () => ({ path: `/v1/dashboard/future?zoom=${z}` }),
      })),
      {
        name: "future from/to (a week, 2 weeks out)",
        request: () => ({
          path: `/v1/dashboard/future?from=${nextHour + 14 * DAY}&to=${nextHour + 21 * DAY}`,
        }),
      },
      { name: "now (30 min)", request: () => ({ path: "/v1/dashboard/now?minutes=30" }) },
      { name: "jobs: first page", request: () => ({ path: "/v1/dashboard/jobs" }) },
      {
        name: "jobs: pending, due range, page 25",
        request: () => ({
          path: `/v1/dashboard/jobs?status=pending&dueFrom=${nextHour + 30 * DAY}&dueTo=${nextHour + 31 * DAY}`,
        }),
      },
      { name: "jobs: dead", request: () => ({ path: "/v1/dashboard/jobs?status=dead" }) },
      { name: "jobs: search by id", request: () => ({ path: `/v1/dashboard/jobs?q=${someId}` }) },
      {
        name: "jobs: search by key",
        request: (i) => ({ path: `/v1/dashboard/jobs?q=order-${i % 100}` }),
      },
      { name: "job detail", request: () => ({ path: `/v1/dashboard/jobs/${someId}` }) },
      {
        name: "cancel",
        request: (i) => ({
          path: `/v1/dashboard/jobs/${victims[i]!.id}/cancel`,
          method: "POST",
          body: {},
        }),
      },
      {
        name: "snooze (reschedule)",
        request: (i) => ({
          path: `/v1/dashboard/jobs/${victims[iterations + i]!.id}/reschedule`,
          method: "POST",
          body: { dueAt: nextHour + 80 * DAY + i },
        }),
      },
    ];

    const rows: (string | number)[][] = [];
    const goals: GoalRow[] = [];
    for (const e of endpoints) {
      const once = async (i: number): Promise<number> => {
        const r = e.request(i);
        const t = performance.now();
        const res = await fetch(base + r.path, {
          method: r.method ?? "GET",
          headers: {
            authorization: "Bearer bench",
            ...(r.body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
        });
        await res.arrayBuffer();
        const ms = performance.now() - t;
        if (res.status !== 200) throw new Error(`${e.name}: HTTP ${res.status}`);
        return ms;
      };
      const writes = e.request(0).method === "POST";
      if (!writes) for (let i = 0; i < 5; i++) await once(i);
      const times: number[] = [];
      for (let i = 0; i < iterations; i++) times.push(await once(i));
      const sorted = ascending(times);
      const p50 = percentile(sorted, 50);
      const p99 = percentile(sorted, 99);
      const max = sorted[sorted.length - 1]!;
      rows.push([e.name, fmt(p50), fmt(p99), fmt(max)]);
      goals.push({
        metric: `${e.name}: p99 latency`,
        value: `${fmt(p99)} ms`,
        goal: `< ${GOAL_MS} ms`,
        baseline: "-",
        ratio: `${fmt(p99 / GOAL_MS)}x of goal`,
        pass: p99 < GOAL_MS,
      });
    }
    return {
      name: "dashboard-data",
      title: `Dashboard data endpoints with a ${count(backlog)} pending backlog (over HTTP on loopback)`,
      goals,
      details: [
        {
          title: `Latency per endpoint, ms (${iterations} requests each, sequential)`,
          headers: ["endpoint", "p50", "p99", "max"],
          rows,
        },
      ],
      notes: [
        `backlog: ${count(backlog)} pending jobs over the next 90 days in hour buckets (bulk-loaded in ${fmt(loadSecs, 1)} s), plus ${count(fired)} fired in the last minutes (1% dead)`,
        "future reads per-bucket counters (bucketsCounts), never job rows; now reads status counters, the first pending job (one bucket) and in-memory per-minute and dead counts",
        "times include HTTP on loopback, JSON encoding and the authenticate call (a constant here)",
      ],
    };
  } finally {
    await app.close();
    await scheduler.stop();
    await store.close();
    file.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = sizesFromEnv();
  process.stdout.write(
    `## duetime dashboard benchmark (scale ${sizes.scale})\n\n${machineFacts()}\n\n`,
  );
  dashboardData(sizes).then(
    (r) => {
      process.stdout.write(renderResult(r));
      note("done");
    },
    (err: unknown) => {
      process.stderr.write(`dashboard-data failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
