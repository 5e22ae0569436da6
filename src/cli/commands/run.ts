import type { Command } from "commander";
import type { Scheduler } from "../../index.js";
import { EXIT } from "../errors.js";
import { action, openScheduler, out, outJson, parseIntFlag, resolveDb } from "../context.js";
import type { GlobalOptions } from "../context.js";
import { formatDuration } from "../format.js";
import { loadHandlers } from "../handlers-module.js";

interface RunOptions {
  handlers: string;
  concurrency?: string;
  stopTimeout?: string;
  json?: boolean;
}

/** `duetime run --handlers <module>`: fires due jobs until SIGINT/SIGTERM. */
export function registerRun(program: Command): void {
  program
    .command("run")
    .description("fire due jobs with the handlers of a module, until SIGINT or SIGTERM")
    .requiredOption(
      "--handlers <module>",
      "ES module whose default export (or `handlers`) maps target names to functions",
    )
    .option("--concurrency <n>", "handlers running at once", "100")
    .option("--stop-timeout <ms>", "how long a stop waits for running handlers", "10000")
    .option("--json", "log events as JSON lines")
    .addHelpText(
      "after",
      `
Handler module example (handlers.mjs):
  export default {
    remind: async (job, { attempt, latenessMs, signal }) => {
      console.log("reminder", job.payload);
    },
  };

On SIGINT or SIGTERM the engine stops claiming, hands unstarted jobs back, waits for
running handlers (--stop-timeout), closes the database and exits 0.`,
    )
    .action(
      action(async (o: RunOptions, cmd: Command) => {
        const concurrency = parseIntFlag(o.concurrency, "--concurrency", 1, 100_000)!;
        const stopTimeoutMs = parseIntFlag(o.stopTimeout, "--stop-timeout", 0, 3_600_000)!;
        const handlers = await loadHandlers(o.handlers);
        const scheduler = await openScheduler(cmd, { concurrency });
        for (const [name, fn] of handlers) scheduler.handle(name, fn);
        const log = eventLogger(o.json === true);
        subscribe(scheduler, log);
        scheduler.start();
        const db = resolveDb(cmd.optsWithGlobals<GlobalOptions>());
        log("started", { db, handlers: [...handlers.keys()], pid: process.pid });
        await untilSignal();
        log("stopping", { timeoutMs: stopTimeoutMs });
        // A second signal during the drain means "now": claimed jobs come back by lease.
        const force = (): void => process.exit(EXIT.failure);
        process.once("SIGINT", force).once("SIGTERM", force);
        await scheduler.close({ timeoutMs: stopTimeoutMs });
        log("stopped", {});
        return EXIT.ok;
      }),
    );
}

type Log = (event: string, fields: Record<string, unknown>) => void;

function eventLogger(json: boolean): Log {
  return (event, fields) => {
    const at = new Date().toISOString();
    if (json) {
      outJson({ at, event, ...fields });
      return;
    }
    const text = Object.entries(fields)
      .map(([k, v]) => `${k}=${textValue(v)}`)
      .join(" ");
    out(`${at} ${event.padEnd(8)} ${text}`.trimEnd());
  };
}

function textValue(v: unknown): string {
  const text = Array.isArray(v) ? v.join(",") : String(v);
  return /[\s"=]/.test(text) ? JSON.stringify(text) : text;
}

function subscribe(s: Scheduler, log: Log): void {
  s.on("succeeded", ({ job, latenessMs }) =>
    log("succeeded", { id: job.id, target: job.target, latenessMs, attempt: job.attempts }),
  );
  s.on("failed", ({ job, latenessMs, error, retryAt }) =>
    log("failed", {
      id: job.id,
      target: job.target,
      latenessMs,
      attempt: `${job.attempts}/${job.maxAttempts}`,
      retryIn: formatDuration(retryAt - Date.now()),
      retryAt: new Date(retryAt).toISOString(),
      error,
    }),
  );
  s.on("dead", ({ job, latenessMs, error }) =>
    log("dead", {
      id: job.id,
      target: job.target,
      latenessMs,
      attempt: `${job.attempts}/${job.maxAttempts}`,
      error,
    }),
  );
  s.on("expired", ({ job, latenessMs }) =>
    log("expired", {
      id: job.id,
      target: job.target,
      latenessMs,
      expireAfterMs: job.expireAfterMs,
    }),
  );
}

/** Resolves on the first SIGINT or SIGTERM; holds the process open until then. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    // The engine's timers may be unref'd; this one keeps the process alive while running.
    const keepAlive = setInterval(() => undefined, 1 << 30);
    const onSignal = (signal: NodeJS.Signals): void => {
      clearInterval(keepAlive);
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      resolve(signal);
    };
    process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  });
}
