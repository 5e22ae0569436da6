/**
 * What a benchmark returns and how it is printed: one goal table (absolute figure, goal,
 * the physical baseline measured in the same run, the ratio, PASS/MISS) and any number of
 * detail tables. Tables are Markdown, so a run's output can be pasted into
 * docs/benchmarks.md as is.
 */
export interface GoalRow {
  readonly metric: string;
  /** The absolute figure, formatted with its unit. */
  readonly value: string;
  readonly goal: string;
  /** The physical baseline measured in the same run (what bounds this figure), or "-". */
  readonly baseline: string;
  /** Figure / baseline (or the ratio the goal is about), formatted. */
  readonly ratio: string;
  /** null: informational, no goal. */
  readonly pass: boolean | null;
}

export interface Table {
  readonly title: string;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
}

export interface BenchResult {
  readonly name: string;
  readonly title: string;
  readonly goals: readonly GoalRow[];
  readonly details: readonly Table[];
  readonly notes: readonly string[];
}

export function renderTable(t: Table): string {
  const cells = [t.headers, ...t.rows].map((r) => r.map((c) => String(c)));
  const widths = t.headers.map((_, i) => Math.max(3, ...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: readonly string[]): string =>
    `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const sep = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  const [head, ...body] = cells;
  return [`${t.title}`, "", line(head!), sep, ...body.map(line)].join("\n");
}

export function goalTable(r: BenchResult): Table {
  return {
    title: `### ${r.title}`,
    headers: ["metric", "measured", "goal", "baseline", "ratio", "result"],
    rows: r.goals.map((g) => [
      g.metric,
      g.value,
      g.goal,
      g.baseline,
      g.ratio,
      g.pass === null ? "info" : g.pass ? "PASS" : "MISS",
    ]),
  };
}

export function renderResult(r: BenchResult): string {
  const parts = [renderTable(goalTable(r))];
  for (const d of r.details) parts.push(renderTable(d));
  if (r.notes.length > 0) parts.push(r.notes.map((n) => `- ${n}`).join("\n"));
  return `${parts.join("\n\n")}\n`;
}

/** Formatting helpers: fixed decimals that stay readable across magnitudes. */
export function fmt(n: number, digits = 2): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString("en-US");
  if (Math.abs(n) >= 100) return n.toFixed(Math.min(digits, 1));
  return n.toFixed(digits);
}

export function rate(perSecond: number): string {
  return `${Math.round(perSecond).toLocaleString("en-US")}/s`;
}

export function ratio(a: number, b: number): string {
  if (!(b > 0)) return "-";
  return `${fmt(a / b)}x`;
}

/**
 * Runs one named benchmark for a runner: prints its tables to stdout (then `trailer()`, if
 * given), adds PASS/MISS/FAIL lines to `summary`, reports timing on stderr, and turns a
 * thrown error into a FAIL line instead of ending the run. Resolves to false on a failure.
 */
export async function runNamed(
  name: string,
  run: () => Promise<BenchResult>,
  summary: string[],
  trailer?: () => string,
): Promise<boolean> {
  process.stderr.write(`> ${name}\n`);
  const t = performance.now();
  let ok = true;
  try {
    const result = await run();
    process.stdout.write(`${renderResult(result)}${trailer?.() ?? ""}\n`);
    for (const g of result.goals) {
      if (g.pass !== null) summary.push(`${g.pass ? "PASS" : "MISS"}  ${name}: ${g.metric}`);
    }
  } catch (err) {
    ok = false;
    process.stderr.write(`${name} failed: ${(err as Error).stack ?? String(err)}\n`);
    summary.push(`FAIL  ${name}: ${(err as Error).message}`);
  }
  process.stderr.write(`< ${name} ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  return ok;
}
