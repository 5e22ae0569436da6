/**
 * Child process of the memory-idle benchmark, so RSS is this process's own:
 *   idle-child.ts bare <measureMs>          same imports, no store: the baseline
 *   idle-child.ts store <measureMs> <db>    open the store, start a Scheduler, stay idle
 * Prints one JSON line: RSS (MiB) after imports, after start, max and at the end of the
 * window, CPU use over the window as a percentage of one core, and the SQLite statements
 * the process ran over the window (sqlite-statements.ts).
 */
import { Scheduler } from "../../src/api/scheduler.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { countSqliteStatements } from "./sqlite-statements.js";

const [mode, measureArg, db] = process.argv.slice(2);
const measureMs = Number(measureArg);
const MiB = 1024 * 1024;
const rss = (): number => process.memoryUsage().rss / MiB;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const rssImports = rss();
const statements = countSqliteStatements();
let scheduler: Scheduler | null = null;
if (mode === "store") {
  if (!db) throw new Error("idle-child: store mode needs a db path");
  const store = new SqliteStore({ path: db });
  scheduler = new Scheduler({ store });
  scheduler.handle("noop", () => undefined);
  scheduler.start();
} else if (mode !== "bare") {
  throw new Error(`idle-child: unknown mode ${mode}`);
}
// Both modes settle before the window (the tail of module loading and start-up work is
// not idle cost; measured right after the imports, the bare child showed 0.5-0.7 %).
await sleep(Math.min(2000, measureMs));
const rssStart = rss();
let rssMax = rssStart;
const cpu0 = process.cpuUsage();
const statements0 = statements.read();
const t0 = performance.now();
while (performance.now() - t0 < measureMs) {
  await sleep(Math.min(1000, measureMs));
  rssMax = Math.max(rssMax, rss());
}
const cpu = process.cpuUsage(cpu0);
const statementsRun = statements.read() - statements0;
const wallMs = performance.now() - t0;
const rssEnd = rss();
const stats = scheduler ? await scheduler.stats() : null;
const pending = stats?.counts.pending ?? 0;
const paused = stats?.paused.jobs ?? 0;
await scheduler?.close();
process.stdout.write(
  `${JSON.stringify({
    rssImports,
    rssStart,
    rssMax,
    rssEnd,
    cpuPct: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
    wallMs,
    pending,
    paused,
    statements: statementsRun,
  })}\n`,
);
