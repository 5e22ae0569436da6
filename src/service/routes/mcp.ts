import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance, onRequestHookHandler } from "fastify";
import type { Scheduler } from "../../api/scheduler.js";
import type { Logger } from "../../engine/logger.js";
import { ApiError, sendError } from "../http-errors.js";

/** The handler src/mcp/http.ts exports a factory for (createMcpHttpHandler). */
export type McpHttpHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  ctx: { tenant: string; body: unknown },
) => Promise<void>;

/** What the service passes to createMcpHttpHandler. */
export interface McpMountOptions {
  readonly scheduler: Scheduler;
  /** Accept private, loopback and link-local webhook targets (--allow-private-targets). */
  readonly allowPrivateTargets: boolean;
  readonly maxPastMs?: number;
  readonly version?: string;
}

interface McpModule {
  createMcpHttpHandler(opts: McpMountOptions): McpHttpHandler;
}

/**
 * Loads the MCP server's HTTP handler and registers its fired-job targets (reminders) on
 * the scheduler. Imported by a computed specifier so the service builds and starts even
 * where the MCP module is absent; then /mcp answers 501.
 */
export async function loadMcpHandler(
  options: McpMountOptions,
  logger: Logger,
): Promise<McpHttpHandler | null> {
  const dir = "../../mcp/";
  try {
    const http = (await import(`${dir}http.js`)) as McpModule;
    const reminders = (await import(`${dir}reminders.js`)) as {
      registerMcpTargets?: (s: Scheduler) => void;
    };
    reminders.registerMcpTargets?.(options.scheduler);
    return http.createMcpHttpHandler(options);
  } catch (err) {
    logger.warn({ err }, "MCP module not available: /mcp answers 501");
    return null;
  }
}

/** POST/GET/DELETE /mcp behind the bearer hook; the MCP transport writes the answer. */
export function mcpRoutes(
  app: FastifyInstance,
  handler: McpHttpHandler | null,
  auth: onRequestHookHandler,
): void {
  app.route({
    method: ["POST", "GET", "DELETE"],
    url: "/mcp",
    onRequest: auth,
    handler: async (request, reply) => {
      if (!handler) {
        return sendError(
          reply,
          new ApiError(501, "not-implemented", "path", "a server built with MCP", "/mcp"),
        );
      }
      reply.hijack();
      try {
        await handler(request.raw, reply.raw, { tenant: request.tenant, body: request.body });
      } catch (err) {
        request.log.error({ err }, "MCP handler failed");
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { "content-type": "application/json" });
          reply.raw.end(
            JSON.stringify({
              jsonrpc: "2.0",
              error: { code: -32603, message: "internal error" },
              id: null,
            }),
          );
        } else {
          reply.raw.end();
        }
      }
    },
  });
}
