import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Runs bench/lib/idle-child.ts in a process of its own (so RSS and CPU are the child's) and
 * resolves to the JSON line it prints (see that file for the modes).
 */
const HERE = dirname(fileURLToPath(import.meta.url));

export interface ChildReport {
  rssImports: number;
  rssStart: number;
  rssMax: number;
  rssEnd: number;
  cpuPct: number;
  wallMs: number;
  pending: number;
  /** Jobs held by pauses at the end (store mode). */
  paused: number;
  /** SQLite statements run over the window (store mode; 0 in bare mode). */
  statements: number;
}

export function idleChild(args: string[]): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...process.execArgv, join(HERE, "idle-child.ts"), ...args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.on("error", reject);
    p.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`idle child exited with ${code}`));
      try {
        resolve(JSON.parse(out.trim().split("\n").pop() ?? "") as ChildReport);
      } catch (err) {
        reject(new Error(`idle child printed ${JSON.stringify(out)}`, { cause: err }));
      }
    });
  });
}
