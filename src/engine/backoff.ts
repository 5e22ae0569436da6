/**
 * Exponential backoff with "equal jitter": the n-th retry waits between half and all of
 * min(maxMs, baseMs * 2^(n-1)), so retries of many jobs that failed together spread out
 * but never retry instantly.
 */
export function backoffDelay(
  attempt: number,
  opts: { baseMs: number; maxMs: number },
  random: () => number = Math.random,
): number {
  const exp = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}
