import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TransactionCount } from "./pg-transactions.js";

const worker = fileURLToPath(new URL("../postgres-node.ts", import.meta.url));

/** What a node process says of itself since "start" (bench/postgres-node.ts). */
export interface NodeReport extends TransactionCount {
  /** Jobs it has fired. */
  readonly succeeded: number;
  /** Its CPU time, user + system, in ms. */
  readonly cpuMs: number;
  /** Statements by their first words since the process started (TransactionCounter.byStatement). */
  readonly byStatement: readonly (readonly [string, number])[];
}

/** A node process of bench/postgres-node.ts, talked to over IPC. */
export interface NodeProcess {
  ask(m: "start"): Promise<unknown>;
  ask(m: "report"): Promise<NodeReport>;
  stop(): Promise<void>;
}

/** Forks a node process (tsx) on the schema and waits until its store is open. */
export async function startNodeProcess(
  url: string,
  schema: string,
  name: string,
): Promise<NodeProcess> {
  const proc: ChildProcess = fork(worker, [url, schema, name], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const next = (): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`node ${name} exited with ${code}`));
      proc.once("exit", onExit);
      proc.once("message", (m) => {
        proc.off("exit", onExit);
        resolve(m as Record<string, unknown>);
      });
    });
  await next(); // { ready: true }
  return {
    ask: (async (m: string) => {
      const answer = next();
      proc.send(m);
      return answer;
    }) as NodeProcess["ask"],
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    },
  };
}
