import { InvalidJobError } from "../core/errors.js";
import type { BucketCount } from "../api/scheduler.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Named windows of the future chart, from the current bucket forward. */
export const ZOOMS: Readonly<Record<string, number>> = Object.freeze({
  "1h": HOUR,
  "6h": 6 * HOUR,
  "1d": DAY,
  "7d": 7 * DAY,
  "30d": 30 * DAY,
  "90d": 90 * DAY,
  "365d": 365 * DAY,
});

/** The zoom names, for the query rule and the OpenAPI enum. */
export const ZOOM_NAMES: readonly string[] = Object.freeze(Object.keys(ZOOMS));

/** The window of a zoom name, looked up as an own property: `constructor` is not a zoom. */
export function zoomSpan(name: string): number {
  const span = Object.hasOwn(ZOOMS, name) ? ZOOMS[name] : undefined;
  if (span === undefined)
    throw new InvalidJobError("zoom", `one of ${ZOOM_NAMES.join(", ")}`, name);
  return span;
}

/** Display bin widths a chart reads well at; the smallest that fits is chosen. */
const NICE_STEPS = [
  MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  30 * DAY,
];

/**
 * Width of one display bin for `spanMs` shown in at most `maxBins` bins: a whole multiple of
 * the store's bucket width (a bucket never straddles two bins), preferably a round step.
 */
export function binWidth(spanMs: number, bucketWidthMs: number, maxBins: number): number {
  const wanted = Math.max(bucketWidthMs, Math.ceil(spanMs / maxBins));
  for (const step of NICE_STEPS) {
    if (step >= wanted && step % bucketWidthMs === 0) return step;
  }
  return Math.ceil(wanted / bucketWidthMs) * bucketWidthMs;
}

export interface Bin {
  /** Start of the bin (epoch ms, UTC). */
  readonly start: number;
  readonly pending: number;
}

/**
 * Sums per-bucket counts into bins of `binMs` covering [from, to): every bin is present,
 * empty ones with 0, so a chart shows gaps as gaps. `from` must be aligned to `binMs`.
 */
export function binCounts(
  buckets: readonly BucketCount[],
  from: number,
  to: number,
  binMs: number,
): Bin[] {
  const n = Math.max(0, Math.ceil((to - from) / binMs));
  const sums = new Array<number>(n).fill(0);
  for (const b of buckets) {
    const i = Math.floor((b.bucket - from) / binMs);
    if (i >= 0 && i < n) sums[i]! += b.pending;
  }
  return sums.map((pending, i) => ({ start: from + i * binMs, pending }));
}
