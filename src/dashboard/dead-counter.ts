import type { JobChange } from "../api/scheduler.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Jobs that went dead in the last 24 hours, per tenant, counted from the scheduler's
 * `changed` feed in hourly slots: O(1) to record and to read. The store has no index on the
 * time a job died by state, and reading dead jobs by due time costs as much as the finished
 * history of that day (tens of ms per 50k fired), so this counts what this process saw
 * since `since`. With several nodes, each counts its own.
 */
export class DeadCounter {
  private readonly slots = new Map<string, Map<number, number>>();

  constructor(readonly since: number) {}

  record(change: Pick<JobChange, "kind" | "tenant" | "at">): void {
    if (change.kind !== "dead") return;
    let t = this.slots.get(change.tenant);
    if (!t) {
      t = new Map();
      this.slots.set(change.tenant, t);
    }
    const hour = change.at - (change.at % HOUR);
    t.set(hour, (t.get(hour) ?? 0) + 1);
    for (const h of t.keys()) if (h < hour - DAY) t.delete(h);
  }

  /** Dead in the hours overlapping the last 24 h before `now`, and since when it counted. */
  lastDay(now: number, tenant: string): { count: number; since: number } {
    const from = now - DAY;
    let count = 0;
    for (const [hour, n] of this.slots.get(tenant) ?? []) {
      if (hour + HOUR > from && hour <= now) count += n;
    }
    return { count, since: Math.max(from, this.since) };
  }
}
