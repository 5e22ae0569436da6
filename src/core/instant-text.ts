/** The widest instant a Date holds (ECMAScript: 8.64e15 ms either side of 1970). */
const DATE_LIMIT_MS = 8.64e15;

/** Whether `ms` is an instant a Date can show (toISOString, Intl) without throwing. */
export function isShowable(ms: number): boolean {
  return Number.isFinite(ms) && Math.abs(ms) <= DATE_LIMIT_MS;
}

/**
 * `ms` as an ISO 8601 UTC time, for every view of a stored time (HTTP, MCP, dashboard, CLI).
 * Every write refuses a due time outside 1970 to 9999 (requireInstant), but a row written
 * before that rule, or by hand, may hold one: it is shown as "invalid time (epoch ms N)"
 * rather than letting `toISOString`'s RangeError turn a whole listing into a 500.
 */
export function isoInstant(ms: number): string {
  return isShowable(ms) ? new Date(ms).toISOString() : `invalid time (epoch ms ${ms})`;
}
