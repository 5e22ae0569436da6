import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { measureStartup, startupTable } from "./cli-startup.js";

/**
 * The package as a user gets it (run by .ci/run after the tests): `npm pack`, install the
 * tarball into a scratch project, import every entry, run the README's library example
 * from the installed package and `npx duetime --version`, then print the tarball's size
 * beside the installed CLI's start-up time and peak RSS (scripts/cli-startup.ts: medians of
 * alternating rounds, bare `node` in the same rounds as the baseline). Exits non-zero on the
 * first failure.
 *
 * The tarball is installed with --ignore-scripts, so better-sqlite3 is not compiled from
 * source again (about 3 minutes in CI): its native binary is copied from this project's own
 * node_modules, which the same Node built for the same better-sqlite3 version (checked; a
 * different version is rebuilt instead). Every step after that loads it for real: the README
 * example opens a SQLite file through the installed package.
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

/** The README's first TypeScript block (the library example, examples/quickstart.ts). */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const at = readme.indexOf("## Use it as a library");
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (at < 0 || !block) throw new Error("README.md has no library example");
  return block[1]!;
}

/**
 * Copies better-sqlite3's build directory from this project into the scratch install when
 * both have the same version (the same Node on the same machine built it); otherwise runs its
 * install script there after all.
 */
function reuseNativeBinary(): string {
  const versionOf = (dir: string): string =>
    (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
  const ours = join(ROOT, "node_modules/better-sqlite3");
  const theirs = join(scratch, "node_modules/better-sqlite3");
  const binary = "build/Release/better_sqlite3.node";
  if (versionOf(ours) === versionOf(theirs) && existsSync(join(ours, binary))) {
    cpSync(join(ours, "build"), join(theirs, "build"), { recursive: true });
    return `copied ${binary} of better-sqlite3 ${versionOf(ours)} from the project`;
  }
  run("npm", ["rebuild", "better-sqlite3"]);
  return `better-sqlite3 ${versionOf(theirs)} differs from the project's ${versionOf(ours)}: rebuilt`;
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
  step("npm install --ignore-scripts <tarball>", () => {
    run("npm", [
      "install",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      `./${packed.filename}`,
    ]);
    return "";
  });
  step("better-sqlite3's native binary", reuseNativeBinary);
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
  const kb = (n: number): string => `${(n / 1024).toFixed(1)} kB`;
  console.log(
    `\ntarball (npm pack): ${kb(packed.size)}, ${packed.entryCount} files, ${kb(packed.unpackedSize)} unpacked\n`,
  );
  console.log(startupTable(measureStartup([cli], 7, scratch)));
  console.log(
    `\nCLI start-up: 7 alternating rounds, load average (1 min) ${loadavg()[0]!.toFixed(1)}`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
