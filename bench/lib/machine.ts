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
