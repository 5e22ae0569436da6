import type { Command } from "commander";
import type { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { validateTenant } from "../../core/schedule-input.js";
import { EXIT, usageError } from "../errors.js";
import { escapeControls } from "../format.js";
import {
  action,
  openScheduler,
  parseIntFlag,
  resolveDb,
  serviceTimeZone,
  type GlobalOptions,
} from "../context.js";

interface McpOptions {
  tenant: string;
  fire: boolean;
  allowPrivateTargets: boolean;
  toolNames: string;
  stopTimeout: string;
  timeZone?: string;
}

/**
 * `duetime mcp`: the MCP task tools over stdio for a local assistant (Claude Desktop...),
 * and the engine firing reminders of the database meanwhile. stdout carries the protocol and
 * nothing else: every log line goes to stderr.
 */
export function registerMcp(program: Command): void {
  program
    .command("mcp")
    .description("serve the MCP task tools over stdio, firing reminders while connected")
    .option("--tenant <tenant>", "tenant whose tasks the tools create and see", "default")
    .option(
      "--no-fire",
      "do not fire jobs here (another `duetime serve` fires this database); allows webhooks",
    )
    .option(
      "--allow-private-targets",
      "with --no-fire: accept webhook_url hosts on private, loopback and link-local addresses " +
        "(as the `duetime serve --allow-private-targets` that delivers them)",
      false,
    )
    .option("--tool-names <style>", 'tool names "dotted" (task.create) or "underscore"', "dotted")
    .option("--stop-timeout <ms>", "how long a stop waits for running handlers", "5000")
    .option(
      "--time-zone <zone>",
      "IANA zone for a scheduled_at wall time or words when the call gives no timezone (default UTC)",
    )
    .addHelpText(
      "after",
      `
Claude Desktop (claude_desktop_config.json):
  { "mcpServers": { "duetime": {
      "command": "npx", "args": ["duetime", "mcp", "--db", "/path/to/reminders.db"] } } }

This process fires every due job of the database and has a handler only for reminders
(tasks created without webhook_url); task.create refuses webhook_url here. Use a database
of its own, or --no-fire when \`duetime serve\` fires the database (it delivers webhooks and
fires reminders). The process exits 0 when stdin closes or on SIGINT/SIGTERM.`,
    )
    .action(
      action(async (o: McpOptions, cmd: Command) => {
        const tenant = validateTenant(o.tenant, "--tenant");
        if (o.toolNames !== "dotted" && o.toolNames !== "underscore") {
          throw usageError("--tool-names", '"dotted" or "underscore"', o.toolNames);
        }
        const stopTimeoutMs = parseIntFlag(o.stopTimeout, "--stop-timeout", 0, 3_600_000)!;
        // Loaded here: the MCP SDK would slow every other command.
        const [{ StdioServerTransport }, { createMcpServer }, reminders] = await Promise.all([
          import("@modelcontextprotocol/sdk/server/stdio.js"),
          import("../../mcp/server.js"),
          import("../../mcp/reminders.js"),
        ]);
        const scheduler = await openScheduler(cmd, serviceTimeZone(o.timeZone));
        const server = createMcpServer({
          scheduler,
          tenant,
          webhooks: !o.fire,
          allowPrivateTargets: o.allowPrivateTargets,
          toolNameSeparator: o.toolNames === "underscore" ? "_" : ".",
          version: cmd.parent?.version() ?? "0.0.0",
        });
        let unforward = (): void => undefined;
        if (o.fire) {
          reminders.registerMcpTargets(scheduler);
          unforward = reminders.forwardFiredReminders(server, scheduler, tenant);
          scheduler.start();
        }
        const transport = new StdioServerTransport();
        const ended = untilEnd(transport);
        await server.connect(transport);
        const db = resolveDb(cmd.optsWithGlobals<GlobalOptions>());
        log(`serving MCP over stdio: db=${db} tenant=${tenant} fire=${o.fire} pid=${process.pid}`);
        const why = await ended;
        log(`stopping (${why})`);
        unforward();
        await server.close().catch(() => undefined);
        await scheduler.close({ timeoutMs: stopTimeoutMs });
        log("stopped");
        return EXIT.ok;
      }),
    );
}

function log(line: string): void {
  process.stderr.write(`duetime mcp: ${escapeControls(line)}\n`);
}

/**
 * Resolves when the client goes away (stdin ends, the transport closes) or a signal asks
 * us to stop. The stdio transport does not watch for stdin's end itself.
 */
function untilEnd(transport: StdioServerTransport): Promise<string> {
  return new Promise((resolve) => {
    const done = (why: string): void => {
      process.stdin.off("end", onEnd).off("close", onEnd);
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      resolve(why);
    };
    const onEnd = (): void => done("stdin closed");
    const onSignal = (signal: NodeJS.Signals): void => done(signal);
    process.stdin.once("end", onEnd).once("close", onEnd);
    process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
    transport.onclose = () => done("transport closed");
  });
}
