import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
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

/**
 * Builds dist/ when the CLI or the MCP sources are newer than it (`npm test` builds first;
 * this covers `npx vitest run test/mcp` after an edit). Shares the CLI tests' build lock.
 */
export async function ensureBuilt(): Promise<void> {
  const newest = Math.max(newestMtime(join(ROOT, "src/cli")), newestMtime(join(ROOT, "src/mcp")));
  if (existsSync(CLI) && newest <= statSync(CLI).mtimeMs) return;
  const lock = join(ROOT, "test-artifacts", "cli-build.lock");
  mkdirSync(dirname(lock), { recursive: true });
  let owner = false;
  try {
    mkdirSync(lock);
    owner = true;
  } catch {
    // another worker is building
  }
  if (owner) {
    try {
      await new Promise<void>((done) => {
        execFile("npx", ["tsc", "-p", "tsconfig.json"], { cwd: ROOT }, () => done());
      });
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  } else {
    while (existsSync(lock)) await new Promise((r) => setTimeout(r, 100));
  }
  if (!existsSync(CLI)) throw new Error(`build did not produce ${CLI}`);
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}
