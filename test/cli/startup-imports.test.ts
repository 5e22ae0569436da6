import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { cliEnv } from "../examples/processes.js";
import { tempDir } from "../support/temp-dir.js";

/**
 * What the CLI loads at start-up: `--version` and `--help` schedule nothing, so they must not
 * load @opentelemetry/api (src/engine/tracing.ts loads it on first use; docs/benchmarks.md,
 * CLI start-up). A one-line --import hook prints how many of its files are in the CommonJS
 * cache when the process exits; a command that schedules a job shows the hook does see them.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "dist/cli/main.js");
const HOOK =
  'data:text/javascript,import{createRequire}from"node:module";const r=createRequire(process.cwd()+"/");process.on("exit",()=>process.stderr.write("\\notel-files="+Object.keys(r.cache).filter((k)=>k.includes("@opentelemetry")).length+"\\n"))';
const run = promisify(execFile);
const dir = tempDir("duetime-startup-");
afterAll(() => dir.cleanup());

async function otelFilesLoaded(args: string[]): Promise<number> {
  const r = await run(process.execPath, ["--import", HOOK, CLI, ...args], {
    env: cliEnv(),
    cwd: ROOT,
  });
  const m = /otel-files=(\d+)/.exec(r.stderr);
  if (!m) throw new Error(`no otel-files line in:\n${r.stderr}`);
  return Number(m[1]);
}

describe("CLI start-up", () => {
  it("--version and --help do not load @opentelemetry/api; scheduling a job does", async () => {
    expect(await otelFilesLoaded(["--version"])).toBe(0);
    expect(await otelFilesLoaded(["--help"])).toBe(0);
    const db = join(dir.path, "jobs.db");
    expect(
      await otelFilesLoaded(["add", "--db", db, "--target", "t", "in 1 hour"]),
    ).toBeGreaterThan(0);
  }, 60_000);
});
