/** The MCP server: task tools for AI assistants, over stdio (`duetime mcp`) or HTTP (/mcp). */
export { createMcpServer } from "./server.js";
export type { CreateMcpServerOptions } from "./server.js";
export { createMcpHttpHandler } from "./http.js";
export type { McpHttpHandler, McpHttpHandlerOptions, McpRequestContext } from "./http.js";
export { REMINDER_TARGET, forwardFiredReminders, registerMcpTargets } from "./reminders.js";
export type { TaskView, TaskPayload } from "./task-view.js";
