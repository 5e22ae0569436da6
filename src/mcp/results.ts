import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** A successful tool result: a line to read, the structured content after it, and as structuredContent. */
export function ok(summary: string, structured: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: "text", text: `${summary}\n${JSON.stringify(structured, null, 2)}` }],
    structuredContent: structured,
  };
}
