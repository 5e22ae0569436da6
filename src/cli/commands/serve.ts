import type { Command } from "commander";
import { EXIT } from "../errors.js";
import {
  action,
  out,
  parseIntFlag,
  resolveDb,
  serviceTimeZone,
  type GlobalOptions,
} from "../context.js";

interface ServeOptions {
  port: string;
  host: string;
  allowPrivateTargets?: boolean;
  webhookTimeout: string;
  rateLimit: string;
  concurrency: string;
  tenantConcurrency?: string;
  timeZone?: string;
  webhookConnectionsPerOrigin: string;
  webhookConcurrencyPerOrigin?: string;
  quotaLiveJobs: string;
  quotaCreatesPerSecond: string;
  stopTimeout: string;
  logLevel: string;
  requestTimeout: string;
  headersTimeout: string;
  authFailureLimit: string;
  trustProxy?: string;
  corsOrigin: string[];
  readinessCache: string;
  ballastMib: string;
  nodeName?: string;
}

/** What a stop may take beyond --stop-timeout before serve exits anyway (code 1). */
const STOP_MARGIN_MS = 5_000;

/** `duetime serve`: the HTTP API, webhook delivery and /mcp, firing jobs while it runs. */
export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("run the HTTP API (and /mcp), delivering webhooks, until SIGINT or SIGTERM")
    .option("--port <port>", "TCP port (0 picks a free one)", "8080")
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option(
      "--allow-private-targets",
      "accept webhook targets on private, loopback and link-local addresses",
    )
    .option("--webhook-timeout <ms>", "timeout of one webhook attempt", "10000")
    .option("--rate-limit <n>", "requests per second per API key (0: no limit)", "100")
    .option("--concurrency <n>", "webhook deliveries running at once", "100")
    .option(
      "--tenant-concurrency <n>",
      "deliveries one tenant runs at once (default: concurrency minus a tenth)",
    )
    .option(
      "--webhook-connections-per-origin <n>",
      "open connections per webhook origin, all tenants together",
      "64",
    )
    .option(
      "--webhook-concurrency-per-origin <n>",
      "deliveries one tenant runs at once to one origin (default: connections per origin)",
    )
    .option(
      "--quota-live-jobs <n>",
      "most live (pending or claimed) jobs per tenant; 429 past it (0: no limit)",
      "0",
    )
    .option(
      "--quota-creates-per-second <n>",
      "jobs one tenant may create per second, burst twice that; 429 past it (0: no limit)",
      "0",
    )
    .option("--stop-timeout <ms>", "how long a stop waits for running deliveries", "15000")
    .option(
      "--time-zone <zone>",
      "IANA zone for a dueAt wall time or words when the request gives no timeZone (default UTC)",
    )
    .option("--log-level <level>", "pino log level (logs go to stderr)", "info")
    .option("--request-timeout <ms>", "time a client has to send a whole request", "30000")
    .option("--headers-timeout <ms>", "time a client has to send the request headers", "10000")
    .option(
      "--auth-failure-limit <n>",
      "failed authentications per second per client address, burst 10x (0: no limit)",
      "10",
    )
    .option(
      "--ballast-mib <n>",
      "SQLite: MiB of disk reserve beside the database, released on a full disk so due jobs keep firing (0: none)",
      "16",
    )
    .option(
      "--trust-proxy <addresses>",
      "comma-separated proxy addresses or CIDR ranges whose X-Forwarded-For names the client",
    )
    .option(
      "--cors-origin <origin>",
      "let this origin's pages call the API (repeat for several; default: CORS off)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option("--readiness-cache <ms>", "how long a /readyz probe of the store is reused", "1000")
    .option(
      "--node-name <name>",
      "stable name of this node, kept across restarts (default: DUETIME_NODE_NAME, else the host name and a hash of --db); give each process on one host and database its own",
    )
    .addHelpText(
      "after",
      `
Create an API key first (it is shown once):
  duetime keys create --tenant acme
Then:
  duetime serve --db jobs.db --port 8080
  curl -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\
    -d '{"dueAt":"in 10 minutes","target":"https://example.com/hook","payload":{"n":1}}' \\
    http://127.0.0.1:8080/v1/jobs

The API is described at /openapi.json; webhooks are signed (see docs/webhooks.md).
On SIGINT or SIGTERM the server stops accepting, stops claiming, hands unstarted jobs
back, waits for running deliveries (--stop-timeout), closes the database and exits 0.`,
    )
    .action(
      action(async (o: ServeOptions, cmd: Command) => {
        const port = parseIntFlag(o.port, "--port", 0, 65_535)!;
        const rate = parseIntFlag(o.rateLimit, "--rate-limit", 0, 1_000_000)!;
        const failures = parseIntFlag(o.authFailureLimit, "--auth-failure-limit", 0, 1_000_000)!;
        const requestTimeoutMs = parseIntFlag(o.requestTimeout, "--request-timeout", 1, 3_600_000)!;
        const headersTimeoutMs = parseIntFlag(
          o.headersTimeout,
          "--headers-timeout",
          1,
          requestTimeoutMs,
        )!;
        const concurrency = parseIntFlag(o.concurrency, "--concurrency", 1, 100_000)!;
        const stopTimeoutMs = parseIntFlag(o.stopTimeout, "--stop-timeout", 0, 3_600_000)!;
        // Loaded here: fastify, undici and the MCP SDK would slow every other command.
        const { startService } = await import("../../service/service.js");
        const service = await startService({
          db: resolveDb(cmd.optsWithGlobals<GlobalOptions>()),
          port,
          host: o.host,
          allowPrivateTargets: o.allowPrivateTargets === true,
          webhookTimeoutMs: parseIntFlag(o.webhookTimeout, "--webhook-timeout", 1, 600_000)!,
          rateLimit: { perSecond: rate },
          authFailureLimit: { perSecond: failures, burst: Math.max(1, failures * 10) },
          requestTimeoutMs,
          headersTimeoutMs,
          readinessCacheMs: parseIntFlag(o.readinessCache, "--readiness-cache", 0, 3_600_000)!,
          ballastBytes: parseIntFlag(o.ballastMib, "--ballast-mib", 0, 1_048_576)! * 1024 * 1024,
          corsOrigins: o.corsOrigin,
          ...(o.trustProxy === undefined
            ? {}
            : { trustProxy: o.trustProxy.split(",").map((a) => a.trim()) }),
          quotas: {
            maxLiveJobs: parseIntFlag(o.quotaLiveJobs, "--quota-live-jobs", 0, 1_000_000_000)!,
            createsPerSecond: parseIntFlag(
              o.quotaCreatesPerSecond,
              "--quota-creates-per-second",
              0,
              1_000_000,
            )!,
          },
          webhookConnectionsPerOrigin: parseIntFlag(
            o.webhookConnectionsPerOrigin,
            "--webhook-connections-per-origin",
            1,
            10_000,
          )!,
          ...optionalInt(
            "webhookConcurrencyPerOrigin",
            o.webhookConcurrencyPerOrigin,
            "--webhook-concurrency-per-origin",
          ),
          stopTimeoutMs,
          scheduler: {
            concurrency,
            ...optionalInt("tenantConcurrency", o.tenantConcurrency, "--tenant-concurrency"),
            ...nodeNameOf(o),
            ...serviceTimeZone(o.timeZone),
          },
          logLevel: o.logLevel,
          version: cmd.parent?.version() ?? "0.0.0",
        });
        out(`listening on ${service.url}`);
        await untilSignal();
        // A second signal during the drain means "now": claimed jobs come back by lease.
        const force = (): void => process.exit(EXIT.failure);
        process.once("SIGINT", force).once("SIGTERM", force);
        // The contract: out within the stop timeout plus a bounded margin, whatever is still
        // pending (a store that does not answer, a close that waits). Unref'd: a stop that
        // finishes exits as soon as it is done.
        const hardExitMs = stopTimeoutMs + STOP_MARGIN_MS;
        setTimeout(() => {
          process.stderr.write(
            `duetime serve: stop did not finish within ${hardExitMs} ms; exiting (still active: ${process.getActiveResourcesInfo().join(", ")})\n`,
          );
          process.exit(EXIT.failure);
        }, hardExitMs).unref();
        await service.close();
        out("stopped");
        return EXIT.ok;
      }),
    );
}

/** `{ [name]: n }` for a flag that was given, `{}` for one left to its default. */
function optionalInt(
  name: string,
  value: string | undefined,
  flag: string,
): Record<string, number> {
  return value === undefined ? {} : { [name]: parseIntFlag(value, flag, 1, 100_000)! };
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      resolve(signal);
    };
    process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  });
}

/** --node-name, else DUETIME_NODE_NAME; neither: the scheduler's default (host + store). */
function nodeNameOf(o: ServeOptions): { nodeName?: string } {
  const name = o.nodeName ?? (process.env.DUETIME_NODE_NAME || undefined);
  return name === undefined ? {} : { nodeName: name };
}
