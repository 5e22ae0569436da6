import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The CLI tests run the built `dist/cli/main.js` as a user would, each against a fresh
 * SQLite file in its own temp directory.
 */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const CLI = join(ROOT, "dist/cli/main.js");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Builds dist/ when the CLI is missing or older than any source (normally `npm test` built
 * it; this covers `npx vitest run test/cli` or `test/mcp` after an edit). Test files running
 * at once share one build through a lock directory.
 */
export async function ensureBuilt(): Promise<void> {
  if (existsSync(CLI) && newestMtime(join(ROOT, "src")) <= statSync(CLI).mtimeMs) return;
  // Several test files may get here at once: one builds, the others wait for it.
  const lock = join(ROOT, "test-artifacts", "cli-build.lock");
  mkdirSync(dirname(lock), { recursive: true });
  let owner = false;
  try {
    mkdirSync(lock);
    owner = true;
  } catch {
    // another worker is building
  }
  if (owner) {
    try {
      await new Promise<void>((done) => {
        // tsc still emits when unrelated files have type errors; the CLI's own check is lint.
        execFile("npx", ["tsc", "-p", "tsconfig.json"], { cwd: ROOT }, () => done());
      });
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  } else {
    while (existsSync(lock)) await new Promise((r) => setTimeout(r, 100));
  }
  if (!existsSync(CLI)) throw new Error(`build did not produce ${CLI}`);
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** The test process's environment without DUETIME_DB, so every test names its database. */
function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.DUETIME_DB;
  return env;
}

/** A fresh temp directory; the database path inside it is `db`. */
export function tempWorkspace(): { dir: string; db: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "duetime-cli-"));
  return {
    dir,
    db: join(dir, "jobs.db"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs `duetime <args>` to completion. Never rejects: the exit code is part of the result. */
export function cli(
  args: readonly string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolveRun) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: opts.cwd ?? ROOT,
        env: { ...baseEnv(), ...opts.env },
        timeout: opts.timeoutMs ?? 20_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        resolveRun({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Runs independent commands side by side (refusals, reads): one process each, the results
 * in the order given. A CLI process costs about half a second of start-up; a test's dozen
 * refusals one after another left the machine's other core idle.
 */
export function cliAll(
  commands: readonly (readonly string[])[],
  opts: Parameters<typeof cli>[1] = {},
): Promise<CliResult[]> {
  return Promise.all(commands.map((args) => cli(args, opts)));
}

/** Runs a command with `--json` and parses its stdout. */
export async function cliJson<T = Record<string, unknown>>(
  args: readonly string[],
  opts: Parameters<typeof cli>[1] = {},
): Promise<{ code: number; body: T; stderr: string }> {
  const r = await cli([...args, "--json"], opts);
  let body: T;
  try {
    body = JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.code}): ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return { code: r.code, body, stderr: r.stderr };
}

/** Starts `duetime <args>` in the background, collecting its output. */
export function startCli(args: readonly string[]): {
  child: ChildProcess;
  output: () => string;
  waitFor: (re: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: baseEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const listeners = new Set<() => void>();
  const onData = (d: Buffer): void => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on("exit", (code, signal) => r({ code, signal })),
  );
  const waitFor = (re: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> =>
    new Promise((resolveWait, reject) => {
      const check = (): boolean => {
        const m = out.match(re);
        if (!m) return false;
        listeners.delete(listener);
        clearTimeout(timer);
        resolveWait(m);
        return true;
      };
      const listener = (): void => void check();
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`timed out waiting for ${re}; output so far:\n${out}`));
      }, timeoutMs);
      listeners.add(listener);
      check();
      void exited.then(() => {
        if (listeners.has(listener) && !check()) {
          listeners.delete(listener);
          clearTimeout(timer);
          reject(new Error(`process exited before ${re}; output:\n${out}`));
        }
      });
    });
  return { child, output: () => out, waitFor, exited };
}

/** Wall-clock parts of `instant` in `timeZone`, read with Intl (independent of duetime). */
export function wallParts(
  instant: number,
  timeZone: string,
): { year: number; month: number; day: number; hour: number; minute: number } {
  const f = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
  });
  const p = Object.fromEntries(f.formatToParts(new Date(instant)).map((x) => [x.type, x.value]));
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
  };
}
