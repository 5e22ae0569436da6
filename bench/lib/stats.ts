/** Small numeric helpers shared by the benchmarks. */

/** The p-th percentile (0..100) of an ascending array, nearest-rank; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function ascending(values: Iterable<number>): number[] {
  return [...values].sort((a, b) => a - b);
}

export function mean(values: readonly number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return values.length === 0 ? NaN : s / values.length;
}

export function median(values: readonly number[]): number {
  return percentile(ascending(values), 50);
}

/** Runs `fn` repeatedly until `budgetMs` is spent (at least `min`, at most `max` times). */
export function timeRepeated(
  fn: () => void,
  opts: { budgetMs: number; min: number; max: number },
): { runs: number; msEach: number } {
  const start = performance.now();
  let runs = 0;
  while (runs < opts.min || (runs < opts.max && performance.now() - start < opts.budgetMs)) {
    fn();
    runs++;
  }
  return { runs, msEach: (performance.now() - start) / runs };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function mib(bytes: number): number {
  return bytes / (1024 * 1024);
}
