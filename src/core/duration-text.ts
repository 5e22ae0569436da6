/** "2h 5m", "1.5 s", "120 ms": a short human duration. */
export function formatDuration(ms: number): string {
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(a)} ms`;
  if (a < 60_000) return `${(a / 1000).toFixed(1)} s`;
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ];
  const parts: string[] = [];
  let rest = a;
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0 || parts.length > 0) parts.push(`${n}${name}`);
    rest -= n * size;
    if (parts.length === 2) break;
  }
  return parts.filter((p) => !/^0/.test(p)).join(" ");
}
