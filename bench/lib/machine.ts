import Database from "better-sqlite3";
import { cpus, totalmem, type as osType, release } from "node:os";

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
  ].join(", ");
}
