import * as hdr from "hdr-histogram-js";
import type { JobChange } from "./scheduler-events.js";

/** What happened in one minute, for one tenant (or all). */
export interface MinuteActivity {
  /** Start of the minute (epoch ms). */
  readonly minute: number;
  /** Jobs that succeeded in that minute. */
  readonly succeeded: number;
  /** @deprecated The same count as `succeeded` under its old name; removed in the release after next. */
  readonly fired: number;
  readonly failed: number;
  readonly dead: number;
  readonly expired: number;
  /** Lateness of the jobs that succeeded in that minute, in ms. */
  readonly latenessP50: number;
  readonly latenessP99: number;
  readonly latenessMax: number;
}

interface Slot {
  minute: number;
  succeeded: number;
  failed: number;
  dead: number;
  expired: number;
  lateness: hdr.Histogram;
}

const ALL = "\u0000all";
const MINUTE = 60_000;

/**
 * Recent activity per minute, per tenant and overall, for the last `keepMinutes` minutes:
 * succeeded, failed, dead and expired counts and the lateness of what succeeded. Kept in memory from
 * this process's own firing (a dashboard's "now" view), never by reading the store.
 */
export class ActivityRecorder {
  private readonly tenants = new Map<string, Slot[]>();

  constructor(private readonly keepMinutes = 60) {}

  /** Records an outcome (succeeded/failed/dead/expired) at `at` with its lateness. */
  record(change: Pick<JobChange, "kind" | "tenant" | "at">, latenessMs: number): void {
    for (const key of [ALL, change.tenant]) {
      const slot = this.slotFor(key, change.at);
      switch (change.kind) {
        case "succeeded":
          slot.succeeded++;
          slot.lateness.recordValue(clampLateness(latenessMs));
          break;
        case "failed":
          slot.failed++;
          break;
        case "dead":
          slot.dead++;
          break;
        case "expired":
          slot.expired++;
          break;
        default:
          break;
      }
    }
  }

  /** The last `minutes` minutes up to `now`, oldest first, empty minutes included. */
  minutes(now: number, minutes: number, tenant?: string): MinuteActivity[] {
    const slots = this.tenants.get(tenant ?? ALL) ?? [];
    const current = Math.floor(now / MINUTE) * MINUTE;
    const out: MinuteActivity[] = [];
    for (let m = current - (minutes - 1) * MINUTE; m <= current; m += MINUTE) {
      const s = slots.find((x) => x.minute === m);
      out.push({
        minute: m,
        succeeded: s?.succeeded ?? 0,
        fired: s?.succeeded ?? 0,
        failed: s?.failed ?? 0,
        dead: s?.dead ?? 0,
        expired: s?.expired ?? 0,
        latenessP50: s ? s.lateness.getValueAtPercentile(50) : 0,
        latenessP99: s ? s.lateness.getValueAtPercentile(99) : 0,
        latenessMax: s ? s.lateness.maxValue : 0,
      });
    }
    return out;
  }

  /** Lateness percentiles over the last `minutes` minutes. */
  lateness(
    now: number,
    minutes: number,
    tenant?: string,
  ): { count: number; p50: number; p99: number; max: number } {
    const since = Math.floor(now / MINUTE) * MINUTE - (minutes - 1) * MINUTE;
    const merged = newHistogram();
    for (const s of this.tenants.get(tenant ?? ALL) ?? []) {
      if (s.minute >= since) merged.add(s.lateness);
    }
    return {
      count: merged.totalCount,
      p50: merged.getValueAtPercentile(50),
      p99: merged.getValueAtPercentile(99),
      max: merged.maxValue,
    };
  }

  private slotFor(key: string, at: number): Slot {
    const minute = Math.floor(at / MINUTE) * MINUTE;
    let slots = this.tenants.get(key);
    if (!slots) {
      slots = [];
      this.tenants.set(key, slots);
    }
    let slot = slots.find((s) => s.minute === minute);
    if (!slot) {
      slot = { minute, succeeded: 0, failed: 0, dead: 0, expired: 0, lateness: newHistogram() };
      slots.push(slot);
      slots.sort((a, b) => a.minute - b.minute);
      const oldest = slots[slots.length - 1]!.minute - (this.keepMinutes - 1) * MINUTE;
      while (slots[0]!.minute < oldest) slots.shift();
    }
    return slot;
  }
}

function newHistogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 30 * 86_400_000,
    numberOfSignificantValueDigits: 2,
  });
}

function clampLateness(ms: number): number {
  return Math.min(30 * 86_400_000, Math.max(0, Math.round(ms)));
}
