import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";

/**
 * CLI start-up: wall time and peak RSS of `duetime --version` and `duetime --help`, beside
 * bare `node -e 0` measured in the same rounds. Rounds alternate between every command (and
 * every CLI given), so load on a shared machine falls on all of them alike; each figure is the
 * median. The peak RSS is the child's own (process.resourceUsage().maxRSS at exit, through a
 * one-line --import hook given to bare node too).
 *
 *   npx tsx scripts/cli-startup.ts dist/cli/main.js /path/to/other/dist/cli/main.js
 *
 * scripts/pack-check.ts runs it on the installed package.
 */
const RSS_HOOK =
  'data:text/javascript,process.on("exit",()=>process.stderr.write("\\nmaxrss_kb="+process.resourceUsage().maxRSS+"\\n"))';

export interface Startup {
  readonly label: string;
  /** Median wall time, ms. */
  readonly ms: number;
  /** Median peak resident set, MiB. */
  readonly rssMiB: number;
}

function once(args: string[], cwd: string): { ms: number; rssKb: number } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ["--import", RSS_HOOK, ...args], {
    cwd,
    encoding: "utf8",
    timeout: 60_000,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}\n${r.stderr}`);
  const rss = /maxrss_kb=(\d+)/.exec(r.stderr);
  if (!rss) throw new Error(`node ${args.join(" ")}: no maxrss line`);
  return { ms, rssKb: Number(rss[1]) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Start-up of each CLI's --version and --help, and bare node, over `rounds` alternating rounds. */
export function measureStartup(
  clis: readonly string[],
  rounds = 9,
  cwd = process.cwd(),
): Startup[] {
  const cases: { label: string; args: string[] }[] = [
    { label: "bare node -e 0", args: ["-e", "0"] },
  ];
  for (const cli of clis) {
    const name = clis.length === 1 ? "duetime" : cli;
    cases.push({ label: `${name} --version`, args: [cli, "--version"] });
    cases.push({ label: `${name} --help`, args: [cli, "--help"] });
  }
  const samples = cases.map(() => ({ ms: [] as number[], rss: [] as number[] }));
  for (const c of cases) once(c.args, cwd); // warm the file cache once
  for (let r = 0; r < rounds; r++) {
    cases.forEach((c, i) => {
      const s = once(c.args, cwd);
      samples[i]!.ms.push(s.ms);
      samples[i]!.rss.push(s.rssKb);
    });
  }
  return cases.map((c, i) => ({
    label: c.label,
    ms: median(samples[i]!.ms),
    rssMiB: median(samples[i]!.rss) / 1024,
  }));
}

export function startupTable(rows: readonly Startup[]): string {
  const lines = ["| command | start-up (median) | peak RSS (median) |", "| --- | --- | --- |"];
  for (const r of rows)
    lines.push(`| ${r.label} | ${r.ms.toFixed(0)} ms | ${r.rssMiB.toFixed(1)} MiB |`);
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const clis = process.argv.slice(2);
  if (clis.length === 0) {
    console.error("usage: tsx scripts/cli-startup.ts <cli main.js> [<cli main.js>...]");
    process.exit(2);
  }
  const rounds = Number(process.env.STARTUP_ROUNDS ?? 9);
  console.log(startupTable(measureStartup(clis, rounds)));
  const load = (await import("node:os")).loadavg()[0]!;
  console.log(`\n${rounds} alternating rounds; load average (1 min) ${load.toFixed(1)}`);
}
