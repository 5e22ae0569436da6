import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpServer, type CreateMcpServerOptions } from "./server.js";

/** Options of the /mcp handler: those of createMcpServer but the tenant, given per request. */
export type McpHttpHandlerOptions = Omit<CreateMcpServerOptions, "tenant">;

/** What the HTTP service hands the handler after authenticating the request. */
export interface McpRequestContext {
  /** Tenant of the request's API key: every tool call is scoped to it. */
  readonly tenant: string;
  /** The JSON body, already parsed by the service (fastify's body parser). */
  readonly body: unknown;
}

export type McpHttpHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  ctx: McpRequestContext,
) => Promise<void>;

/**
 * The streamable-HTTP MCP endpoint, stateless: each POST gets its own server and transport,
 * scoped to `ctx.tenant`, and both are closed when the response ends. No session lives
 * between requests, so any node behind a load balancer can answer any request, and the
 * tenant is re-derived from the bearer key every time. Answers are plain JSON (no SSE):
 * the task tools do not stream.
 *
 * Only POST carries MCP messages in stateless mode; GET (a server-to-client stream) and
 * DELETE (ending a session) answer 405 as the transport specification allows.
 *
 * The caller authenticates first (the service's bearer check) and must not write to `res`
 * itself afterwards (with fastify: `reply.hijack()`, then pass `request.raw`, `reply.raw`).
 */
export function createMcpHttpHandler(options: McpHttpHandlerOptions): McpHttpHandler {
  // Validate the options once, at mount time, rather than on the first request.
  createMcpServer({ ...options, tenant: "default" });
  return async (req, res, ctx) => {
    if (req.method !== "POST") {
      methodNotAllowed(res);
      return;
    }
    const server = createMcpServer({ ...options, tenant: ctx.tenant });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, ctx.body);
  };
}

function methodNotAllowed(res: ServerResponse): void {
  res.writeHead(405, { "content-type": "application/json", allow: "POST" });
  res.end(
    JSON.stringify({
      jsonrpc: "2.0",
      error: {
        code: -32000,
        message: "method: expected POST (this MCP endpoint is stateless), received another method",
      },
      id: null,
    }),
  );
}
