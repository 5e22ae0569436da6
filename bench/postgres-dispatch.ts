import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Scheduler } from "../src/api/scheduler.js";
import type { ScheduleInput } from "../src/core/schedule-input.js";
import { rate, type BenchResult } from "./lib/report.js";
import {
  benchServer,
  benchStore,
  dropStore,
  statementCount,
  type PgSizes,
} from "./postgres-common.js";

const worker = fileURLToPath(new URL("./postgres-node.ts", import.meta.url));

/**
 * Dispatch throughput with 1, 2 and 3 node processes on one database: each node is a
 * Scheduler (defaults: claim batch 500, concurrency 100, timing wheel) claiming only the
 * shards its leases own, with a no-op handler. `dispatchJobs` jobs are scheduled due
 * across one second starting at T (all written before T); the time is from T until every
 * job has succeeded. Statements per fired job count everything the server executed in
 * that span (pg_stat_statements), the nodes' heartbeats and sweeps included.
 */
export async function pgDispatch(sizes: PgSizes): Promise<BenchResult> {
  const rows: (string | number)[][] = [];
  const srv = await benchServer();
  for (const count of [1, 2, 3]) {
    const store = await benchStore(`dispatch${count}`, 3);
    const procs: ChildProcess[] = [];
    try {
      for (let i = 0; i < count; i++) {
        procs.push(
          spawn(process.execPath, ["--import", "tsx", worker, srv.url, store.schema, `node-${i}`], {
            stdio: ["ignore", "pipe", "inherit"],
          }),
        );
      }
      await Promise.all(procs.map((p) => started(p)));
      await new Promise((r) => setTimeout(r, 1500)); // leases settle (heartbeat 500 ms)
      const writer = new Scheduler({ store });
      const n = sizes.dispatchJobs;
      const t0 = Date.now() + Math.max(2000, n / 15); // every write done before T
      const inputs: ScheduleInput[] = Array.from({ length: n }, (_, i) => ({
        dueAt: t0 + Math.floor((i * 1000) / n),
        target: "noop",
      }));
      for (let i = 0; i < n; i += 10_000) await writer.scheduleMany(inputs.slice(i, i + 10_000));
      const writtenLate = Date.now() > t0;
      await new Promise((r) => setTimeout(r, Math.max(0, t0 - Date.now())));
      const s0 = await statementCount(store);
      let polls = 0;
      for (;;) {
        polls++;
        const c = await store.jobsCountByStatus({});
        if (c.succeeded >= n) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const secs = (Date.now() - t0) / 1000;
      const s1 = await statementCount(store);
      const statements = s1.n - s0.n - polls - 1;
      rows.push([
        count,
        rate(n / secs),
        secs.toFixed(2),
        (statements / n).toFixed(3),
        writtenLate ? "yes" : "no",
      ]);
    } finally {
      for (const p of procs) p.kill("SIGTERM");
      await Promise.all(
        procs.map((p) => new Promise((r) => (p.exitCode !== null ? r(null) : p.once("exit", r)))),
      );
      await dropStore(store);
    }
  }
  return {
    name: "postgres-dispatch",
    title: `PostgreSQL dispatch throughput: ${sizes.dispatchJobs.toLocaleString("en-US")} jobs due within one second, 1 to 3 node processes`,
    goals: rows.map((r) => ({
      metric: `${r[0]} node${r[0] === 1 ? "" : "s"}: jobs/s`,
      value: String(r[1]),
      goal: "-",
      baseline: "-",
      ratio: "-",
      pass: null,
    })),
    details: [
      {
        title: "#### By nodes",
        headers: ["nodes", "fired/s", "seconds", "statements per fired job", "writes ran past T"],
        rows,
      },
    ],
    notes: [
      "node processes, the writer and PostgreSQL share the same machine (2 cores here): more nodes add CPU contention, not cores",
    ],
  };
}

function started(p: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = "";
    p.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("started")) resolve();
    });
    p.once("exit", (code) => reject(new Error(`node exited with ${code} before starting`)));
  });
}
