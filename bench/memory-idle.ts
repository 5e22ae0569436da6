import { backlogFile, scratchCopy } from "./lib/data.js";
import { idleChild as child, type ChildReport } from "./lib/idle-child-run.js";
import { note } from "./lib/progress.js";
import { fmt, ratio, type BenchResult } from "./lib/report.js";
import { count, type Sizes } from "./lib/scale.js";

/**
 * Memory and idle cost: a child process opens a store holding the pending backlog, starts
 * a Scheduler with default options (maxIdleMs 1000: the watcher wakes every second) and
 * sits idle (the earliest job is 2 days away); RSS and CPU (process.cpuUsage) are measured
 * over the window. Run for a smaller and a larger backlog to show RSS does not grow with
 * it. Baseline: the same child with the same imports but no store (what Node and the
 * loader cost by themselves).
 */
export async function memoryIdle(sizes: Sizes): Promise<BenchResult> {
  const bare = await child(["bare", String(Math.min(10_000, sizes.idleMeasureMs))]);
  const runs: { n: number; r: ChildReport }[] = [];
  for (const n of sizes.memoryBacklogs) {
    const { path } = await backlogFile(n);
    const copy = scratchCopy(path, `idle-${n}`);
    try {
      note(`memory-idle: ${count(n)} backlog, idle for ${sizes.idleMeasureMs / 1000} s`);
      const r = await child(["store", String(sizes.idleMeasureMs), copy.path]);
      if (r.pending !== n) throw new Error(`memory-idle: ${r.pending} pending, expected ${n}`);
      runs.push({ n, r });
    } finally {
      copy.remove();
    }
  }
  const [small, large] = [runs[0]!, runs[1]!];
  const mb = (v: number): string => `${fmt(v, 1)} MiB`;
  return {
    name: "memory-idle",
    title: `Memory and idle cost: open store + started Scheduler, nothing due for 2 days`,
    goals: [
      {
        metric: `RSS with ${count(large.n)} pending (max over the window)`,
        value: mb(large.r.rssMax),
        goal: "< 200 MB",
        baseline: mb(bare.rssMax),
        ratio: ratio(large.r.rssMax, bare.rssMax),
        pass: large.r.rssMax * 1.048576 < 200,
      },
      {
        metric: `RSS growth with the backlog, ${count(large.n)} vs ${count(small.n)}`,
        value: mb(large.r.rssMax),
        goal: "<= 1.1x",
        baseline: mb(small.r.rssMax),
        ratio: ratio(large.r.rssMax, small.r.rssMax),
        pass: large.r.rssMax <= 1.1 * small.r.rssMax,
      },
      {
        metric: `idle CPU, ${count(large.n)} pending, over ${fmt(large.r.wallMs / 1000, 0)} s`,
        value: `${fmt(large.r.cpuPct, 3)} % of a core`,
        goal: "< 1 %",
        baseline: `${fmt(bare.cpuPct, 3)} %`,
        ratio: ratio(large.r.cpuPct, bare.cpuPct),
        pass: large.r.cpuPct < 1,
      },
    ],
    details: [
      {
        title: "Per backlog (RSS in MiB)",
        headers: ["backlog", "after imports", "after start", "max", "end", "idle CPU % of a core"],
        rows: [
          ["none (bare)", bare.rssImports, bare.rssStart, bare.rssMax, bare.rssEnd, bare.cpuPct],
          ...runs.map(({ n, r }) => [
            count(n),
            r.rssImports,
            r.rssStart,
            r.rssMax,
            r.rssEnd,
            r.cpuPct,
          ]),
        ].map((row) => row.map((c) => (typeof c === "number" ? fmt(c, c < 1 ? 3 : 1) : c))),
      },
    ],
    notes: [
      "RSS includes Node, tsx's loader and SQLite's page cache (cache_size 64 MiB by default, filled only by pages actually read)",
      "maxIdleMs at its default (1000 ms); lease sweeper every 5 s, retention every 60 s",
    ],
  };
}
