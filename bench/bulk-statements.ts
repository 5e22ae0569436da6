/**
 * Where a bulk cancel's time goes on SQLite (issue 13 §3), statement by statement: a
 * diagnostic beside bench/bulk-cancel.ts, not part of the suite. On a scratch copy of the
 * bulk-cancel backlog (BENCH_SCALE sizes: medium 200k jobs of one tag), a store with its
 * checkpointer and nothing else running calls operationStep back to back in batches of
 * `--limit` (default 500) until the cancel is done, yielding to the event loop between
 * batches as the runner does. Printed: the rate, the main thread's CPU a job, the time in
 * each statement a job (better-sqlite3's prototypes wrapped, every statement named by its key
 * in statements.ts; BEGIN and COMMIT are statements too), a batch's time outside its
 * statements (JavaScript: decoding, filtering, the counters), the waits for
 * the checkpointer's WAL drains (a batch answered with scanned 0), the WAL file's largest size
 * (it is reused in place once it starts over, so that is its high-water mark), and the slowest
 * batches.
 *
 *   BENCH_SCALE=medium npx tsx bench/bulk-statements.ts [--limit 500] [--outcome-index id]
 *
 * `--outcome-index id` is a what-if: the copy's outcome index (finished_due, on due_at, id)
 * is rebuilt on (id, due_at), the same lookups in another key order, to show what the
 * outcome rows' page locality costs a cancel walked in job id order.
 */
import { readFileSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { newOperation } from "../src/core/operation.js";
import { SQL } from "../src/stores/sqlite/statements.js";
import { SqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { backlogFile, scratchCopy } from "./lib/data.js";
import { machineFacts } from "./lib/machine.js";
import { fmt, rate, renderTable } from "./lib/report.js";
import { count, sizesFromEnv } from "./lib/scale.js";

const TAG = "campaign:000000000";

/** Time spent in each statement (by its SQL text) while `on`, in ms. */
class StatementTimes {
  readonly bySql = new Map<string, { n: number; ms: number }>();
  on = false;
  /** ms spent in statements since the last take(). */
  private since = 0;

  constructor() {
    const probe = new Database(":memory:");
    const proto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, unknown>;
    probe.close();
    for (const name of ["run", "get", "all"]) {
      const original = proto[name] as (...a: unknown[]) => unknown;
      // eslint-disable-next-line @typescript-eslint/no-this-alias -- the wrapper's own `this` is the statement
      const times = this;
      proto[name] = function (this: { source: string }, ...a: unknown[]) {
        if (!times.on) return original.apply(this, a);
        const t = performance.now();
        try {
          return original.apply(this, a);
        } finally {
          times.add(this.source, performance.now() - t);
        }
      };
    }
  }

  private add(sql: string, ms: number): void {
    const e = this.bySql.get(sql) ?? { n: 0, ms: 0 };
    e.n++;
    e.ms += ms;
    this.bySql.set(sql, e);
    this.since += ms;
  }

  take(): number {
    const s = this.since;
    this.since = 0;
    return s;
  }
}

/** This thread's CPU time in ms (Linux /proc; the process's elsewhere, workers included). */
function threadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in 10 ms ticks
  } catch {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const sizes = sizesFromEnv();
  const limit = Number(argValue("--limit") ?? 500);
  const outcomeIndex = argValue("--outcome-index") ?? "due";
  const n = sizes.bulkCancelJobs;
  const { path } = await backlogFile(n, { prefix: "campaign:", perTag: n });
  const copy = scratchCopy(path, "bulk-statements");
  const times = new StatementTimes();
  try {
    if (outcomeIndex === "id") {
      const db = new Database(copy.path);
      db.exec("DROP INDEX finished_due; CREATE UNIQUE INDEX finished_due ON finished (id, due_at)");
      db.close();
    }
    const store = new SqliteStore({ path: copy.path });
    const op = newOperation(
      {
        id: "01BULKSTATEMENTS0000000000",
        tenant: "default",
        kind: "cancel",
        filter: { tags: [TAG] },
        params: {},
      },
      Date.now(),
    );
    await store.operationsInsert({ operation: op });
    const batches: { ms: number; outside: number }[] = [];
    let walPeak = 0;
    let waits = 0;
    let waitMs = 0;
    times.on = true;
    const cpu0 = threadCpuMs();
    const t0 = performance.now();
    let changed = 0;
    for (;;) {
      times.take();
      const t = performance.now();
      const r = await store.operationStep({ id: op.id, now: Date.now(), limit });
      const ms = performance.now() - t;
      walPeak = Math.max(walPeak, statSync(`${copy.path}-wal`).size);
      const active =
        r !== null && (r.operation.state === "running" || r.operation.state === "queued");
      if (active && r.scanned === 0) {
        waits++;
        waitMs += ms;
      } else {
        batches.push({ ms, outside: ms - times.take() });
      }
      if (!active) {
        changed = r?.operation.changed ?? 0;
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const wallMs = performance.now() - t0;
    const cpuMs = threadCpuMs() - cpu0;
    times.on = false;
    await store.close();
    report({
      n,
      changed,
      limit,
      outcomeIndex,
      wallMs,
      cpuMs,
      batches,
      waits,
      waitMs,
      times,
      walPeak,
    });
  } finally {
    copy.remove();
  }
}

function report(r: {
  n: number;
  changed: number;
  limit: number;
  outcomeIndex: string;
  wallMs: number;
  cpuMs: number;
  batches: { ms: number; outside: number }[];
  waits: number;
  waitMs: number;
  times: StatementTimes;
  walPeak: number;
}): void {
  const names = new Map(Object.entries(SQL).map(([k, sql]) => [sql, k]));
  const us = (ms: number): string => fmt((ms / r.changed) * 1000, 2);
  const jsMs = r.batches.reduce((s, b) => s + b.outside, 0);
  const rows: (string | number)[][] = [...r.times.bySql]
    .map(
      ([sql, e]) =>
        [names.get(sql) ?? sql.slice(0, 40), e.n, fmt(e.ms, 0), us(e.ms)] as (string | number)[],
    )
    .sort((a, b) => Number(b[3]) - Number(a[3]))
    .filter((row) => Number(row[3]) >= 0.01);
  rows.push(["(between statements: JavaScript)", r.batches.length, fmt(jsMs, 0), us(jsMs)]);
  rows.push(["(waiting for a WAL drain)", r.waits, fmt(r.waitMs, 0), us(r.waitMs)]);
  const slow = [...r.batches].sort((a, b) => b.ms - a.ms).slice(0, 5);
  process.stdout.write(`${machineFacts()}\n\n`);
  process.stdout.write(
    `cancel of ${count(r.n)} jobs of one tag, operationStep back to back in batches of ${r.limit}, outcome index on (${r.outcomeIndex === "id" ? "id, due_at" : "due_at, id"}): ` +
      `${r.changed.toLocaleString("en-US")} cancelled in ${fmt(r.wallMs / 1000, 2)} s, ${rate((r.changed / r.wallMs) * 1000)}; ` +
      `main thread CPU ${fmt((r.cpuMs / r.changed) * 1000, 1)} us a job; WAL file at most ${fmt(r.walPeak / 2 ** 20, 0)} MiB\n\n`,
  );
  process.stdout.write(
    `${renderTable({ title: "Time in each statement", headers: ["statement", "calls", "ms", "us a job"], rows })}\n\n`,
  );
  process.stdout.write(
    `slowest batches, ms (outside its statements): ${slow.map((b) => `${fmt(b.ms, 1)} (${fmt(b.outside, 1)})`).join(", ")}\n`,
  );
}

await main();
