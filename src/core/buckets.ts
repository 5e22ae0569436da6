import { InvalidOptionError } from "./errors.js";

/** Width of a time bucket. */
export type BucketGranularity = "minute" | "hour" | "day";

export const GRANULARITY_MS: Readonly<Record<BucketGranularity, number>> = Object.freeze({
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
});

export function granularityMs(g: BucketGranularity): number {
  return GRANULARITY_MS[g];
}

export function parseGranularity(value: unknown, option = "bucketGranularity"): BucketGranularity {
  if (value === "minute" || value === "hour" || value === "day") return value;
  throw new InvalidOptionError(option, '"minute", "hour" or "day"', value);
}

/** Start (epoch ms, UTC) of the bucket holding `dueAt`. */
export function bucketOf(dueAt: number, widthMs: number): number {
  return Math.floor(dueAt / widthMs) * widthMs;
}
