import * as hdr from "hdr-histogram-js";

/** Lateness percentiles, in ms. */
export interface LatenessSummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

/** Records how late each job fired (HdrHistogram, 1 ms to 30 days, 3 significant digits). */
export class LatenessRecorder {
  private readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 30 * 86_400_000,
    numberOfSignificantValueDigits: 3,
  });

  record(latenessMs: number): void {
    this.histogram.recordValue(Math.min(30 * 86_400_000, Math.max(0, Math.round(latenessMs))));
  }

  summary(): LatenessSummary {
    const h = this.histogram;
    return {
      count: h.totalCount,
      p50: h.getValueAtPercentile(50),
      p90: h.getValueAtPercentile(90),
      p99: h.getValueAtPercentile(99),
      max: h.maxValue,
    };
  }
}
