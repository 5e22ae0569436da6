import { spawn, type ChildProcess } from "node:child_process";

/** A child process whose output is kept, with a way to await a line of it. */
export interface Watched {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in the output so far or to come. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  stop(): Promise<void>;
}

/** Starts `node <args>` in `cwd` and watches stdout and stderr together. */
export function startNode(args: string[], cwd: string, env: NodeJS.ProcessEnv): Watched {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const waiters = new Set<() => void>();
  const onData = (d: Buffer): void => {
    out += d.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    child,
    output: () => out,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(out);
          if (!m) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(m);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${out}`));
        }, timeoutMs);
        waiters.add(check);
        child.once("exit", () => check());
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The environment for a CLI child: this one's, without the DUETIME_* settings a developer's shell may carry. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete e.DUETIME_URL;
  delete e.DUETIME_KEY;
  delete e.DUETIME_DB;
  return e;
}
