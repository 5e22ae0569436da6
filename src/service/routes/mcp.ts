import type { FastifyInstance, onRequestHookHandler } from "fastify";
import {
  createMcpHttpHandler,
  type McpHttpHandler,
  type McpHttpHandlerOptions,
} from "../../mcp/http.js";
import { registerMcpTargets } from "../../mcp/reminders.js";
import { ApiError, sendError } from "../http-errors.js";

export type { McpHttpHandler };

/** What the service passes to createMcpHttpHandler. */
export type McpMountOptions = McpHttpHandlerOptions;

/**
 * The MCP server's HTTP handler, with its fired-job targets (reminders) registered on the
 * scheduler. The MCP module is part of this package and imported statically: an error it
 * throws (a bad option, a bug) fails the service's start instead of turning into a 501.
 */
export function mountMcpHandler(options: McpMountOptions): McpHttpHandler {
  const handler = createMcpHttpHandler(options);
  registerMcpTargets(options.scheduler);
  return handler;
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
