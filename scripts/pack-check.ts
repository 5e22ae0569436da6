import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The package as a user gets it (run by .ci/run after the tests): `npm pack`, install the
 * tarball into a scratch project, import every entry, run the README's library example
 * from the installed package and `npx duetime --version`, then print the tarball's size
 * beside the installed CLI's start-up time (median of 7, with bare `node` in the same run as
 * the baseline). Exits non-zero on the first failure.
 */
const ROOT = join(import.meta.dirname, "..");
const ENTRIES = ["duetime", "duetime/client", "duetime/webhooks", "duetime/mcp"];
const version = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;
const scratch = mkdtempSync(join(tmpdir(), "duetime-pack-"));

function step(name: string, fn: () => string): void {
  const t0 = Date.now();
  const detail = fn();
  console.log(`ok  ${name} (${Date.now() - t0} ms)${detail === "" ? "" : `: ${detail}`}`);
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(cmd, args, {
    cwd: scratch,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 600_000,
  });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

function medianMs(cmd: string, args: string[], runs = 7): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    run(cmd, args);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

/** The README's first TypeScript block (the library example, examples/quickstart.ts). */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const at = readme.indexOf("## Use it as a library");
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (at < 0 || !block) throw new Error("README.md has no library example");
  return block[1]!;
}

try {
  let packed = { filename: "", size: 0, unpackedSize: 0, entryCount: 0 };
  step("npm pack", () => {
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", scratch], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    packed = (JSON.parse(out) as (typeof packed)[])[0]!;
    return packed.filename;
  });
  writeFileSync(
    join(scratch, "package.json"),
    JSON.stringify({
      name: "scratch",
      private: true,
      type: "module",
      allowScripts: { "better-sqlite3": true },
    }),
  );
  step("npm install <tarball>", () => {
    run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", `./${packed.filename}`]);
    return "";
  });
  step("import every entry", () => {
    const code = `for (const e of ${JSON.stringify(ENTRIES)}) { const m = await import(e); if (Object.keys(m).length === 0) throw new Error(e + " exports nothing"); console.log(e + ": " + Object.keys(m).length + " exports"); }`;
    return run(process.execPath, ["--input-type=module", "-e", code]).trim().replace(/\n/g, ", ");
  });
  step("the README's library example from the installed package", () => {
    writeFileSync(join(scratch, "quickstart.ts"), readmeExample());
    const out = run(join(ROOT, "node_modules/.bin/tsx"), ["quickstart.ts"], {
      DUETIME_DB: join(scratch, "quickstart.db"),
    });
    if (!out.includes("pending: 1, succeeded: 2")) throw new Error(`unexpected output:\n${out}`);
    return out.trim().split("\n").at(-1)!;
  });
  step("npx duetime --version", () => {
    const out = run("npx", ["--no-install", "duetime", "--version"]).trim();
    if (out !== version) throw new Error(`printed ${out}, expected ${version}`);
    return out;
  });
  const cli = join(scratch, "node_modules/duetime/dist/cli/main.js");
  const bare = medianMs(process.execPath, ["-e", "0"]);
  const start = medianMs(process.execPath, [cli, "--version"]);
  const help = medianMs(process.execPath, [cli, "--help"]);
  const kb = (n: number): string => `${(n / 1024).toFixed(1)} kB`;
  console.log("\n| package                      | value                                   |");
  console.log("| ---------------------------- | --------------------------------------- |");
  console.log(
    `| tarball (npm pack)           | ${kb(packed.size)}, ${packed.entryCount} files, ${kb(packed.unpackedSize)} unpacked |`,
  );
  console.log(
    `| CLI start-up: duetime --version | ${start.toFixed(0)} ms (bare node: ${bare.toFixed(0)} ms) |`,
  );
  console.log(
    `| CLI start-up: duetime --help | ${help.toFixed(0)} ms (bare node: ${bare.toFixed(0)} ms) |`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
