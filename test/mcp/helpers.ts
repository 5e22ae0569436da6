import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { CLI, ROOT } from "../cli/helpers.js";

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
  series_id: string | null;
  tags: string[];
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

/** `duetime mcp <args>` as a client such as Claude Desktop runs it: the official SDK client over stdio. */
export interface Running {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  notices: { id?: string; event?: string }[];
  noticeArrived: Set<() => void>;
}

export async function startMcp(args: string[]): Promise<Running> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", ...args],
    cwd: ROOT,
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "duetime-test", version: "1.0.0" });
  const notices: Running["notices"] = [];
  const noticeArrived = new Set<() => void>();
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    notices.push(n.params.data as { id?: string });
    for (const f of noticeArrived) f();
  });
  await client.connect(transport);
  return { client, transport, stderr: () => err, notices, noticeArrived };
}

/** Resolves when the child reports the reminder `id` fired (no fixed sleep). */
export function reminderNotice(r: Running, id: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      if (!r.notices.some((n) => n.event === "reminder" && n.id === id)) return false;
      r.noticeArrived.delete(check);
      clearTimeout(timer);
      resolve();
      return true;
    };
    const timer = setTimeout(() => {
      r.noticeArrived.delete(check);
      reject(new Error(`no reminder notice for ${id}; stderr:\n${r.stderr()}`));
    }, timeoutMs);
    r.noticeArrived.add(check);
    check();
  });
}
