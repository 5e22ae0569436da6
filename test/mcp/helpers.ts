import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** What the tools answer, as the tests read it. */
export interface ToolAnswer {
  isError: boolean;
  text: string;
  structured: Record<string, unknown>;
}

export interface TaskShape {
  id: string;
  description: string | null;
  status: string;
  kind: string;
  webhook_url: string | null;
  scheduled_at: string;
  scheduled_at_local: string | null;
  timezone: string | null;
  attempts: number;
  fired_at: string | null;
  last_result: unknown;
  last_error: string | null;
  version: number;
}

/** Calls a tool and flattens the result (text of the first content block, structured content). */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolAnswer> {
  const r = await client.callTool({ name, arguments: args });
  const content = r.content as { type: string; text?: string }[];
  return {
    isError: r.isError === true,
    text: content[0]?.text ?? "",
    structured: (r.structuredContent ?? {}) as Record<string, unknown>,
  };
}

/** Calls a tool that must succeed and returns its `task`. */
export async function callTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<TaskShape> {
  const r = await call(client, name, args);
  if (r.isError) throw new Error(`${name} failed: ${r.text}`);
  return r.structured.task as TaskShape;
}

export { ensureBuilt } from "../cli/helpers.js";
