/**
 * `Retry-After` (RFC 9110 10.2.3) as delay-seconds or an HTTP date, in ms from `now`; null
 * when absent or unreadable. One reader for what duetime's webhook receivers answer and what
 * the typed client is answered.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === undefined || value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}
