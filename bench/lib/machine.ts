import Database from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { cpus, loadavg, totalmem, type as osType, release } from "node:os";

/** One line describing where the numbers were measured. */
export function machineFacts(): string {
  const c = cpus();
  const db = new Database(":memory:");
  const sqlite = db.prepare("SELECT sqlite_version()").pluck().get() as string;
  db.close();
  return [
    `date ${new Date().toISOString()}`,
    `${c.length} x ${c[0]?.model.trim() ?? "cpu"}`,
    `${Math.round(totalmem() / 2 ** 30)} GiB RAM`,
    `${osType()} ${release()}`,
    `node ${process.version}`,
    `SQLite ${sqlite}`,
    `duetime ${revision()}`,
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  ].join(", ");
}

/** The commit measured, and whether src/ had uncommitted changes (other work in the tree). */
function revision(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "src"], {
      encoding: "utf8",
    }).trim();
    return dirty === "" ? head : `${head} + uncommitted src changes`;
  } catch {
    return "unknown revision";
  }
}

/** The 1-minute load average, to show how busy the machine was around a benchmark. */
export function load1(): string {
  return loadavg()[0]!.toFixed(2);
}

/**
 * With BENCH_QUIET_LOAD=<n>, waits (up to BENCH_QUIET_WAIT_S seconds, default 600) until
 * the 1-minute load average drops below n before a benchmark starts: on a shared machine,
 * other work skews every timing. Returns how long it waited, in seconds.
 */
export async function waitForQuiet(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const limit = Number(env.BENCH_QUIET_LOAD ?? "");
  if (!(limit > 0)) return 0;
  const maxWaitMs = Number(env.BENCH_QUIET_WAIT_S ?? "600") * 1000;
  const started = performance.now();
  while (loadavg()[0]! >= limit && performance.now() - started < maxWaitMs) {
    process.stderr.write(`  waiting for load average ${load1()} < ${limit}\n`);
    await new Promise((r) => setTimeout(r, 10_000));
  }
  return (performance.now() - started) / 1000;
}
