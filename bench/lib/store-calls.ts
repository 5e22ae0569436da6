import type { Store } from "../../src/store/store.js";
import type { Table } from "./report.js";

const METHODS = [
  "bucketsStage",
  "jobsClaimDue",
  "jobsNextDue",
  "jobsSettle",
  "jobsInsert",
  "leasesExpire",
  "operationStep",
] as const;
type Method = (typeof METHODS)[number];

/**
 * Counts the store calls the engine makes and the time each spends synchronously (the
 * SQLite store does all its work before its promise settles, with the event loop held),
 * by wrapping the instance's methods. Diagnostics for the tables: how many transactions a
 * run took, and how long the event loop was held by each kind.
 */
export class StoreCalls {
  readonly calls = new Map<Method, { n: number; ms: number; maxMs: number; items: number }>();
  private on = false;

  constructor(store: Store) {
    const target = store as unknown as Record<Method, (p: unknown) => Promise<unknown>>;
    for (const m of METHODS) {
      const original = target[m].bind(store);
      target[m] = (p: unknown) => {
        const t = performance.now();
        const result = original(p);
        if (this.on) this.record(m, performance.now() - t, p);
        return result;
      };
    }
  }

  /** Starts counting (calls before this are ignored). */
  start(): void {
    this.on = true;
  }

  stop(): void {
    this.on = false;
  }

  private record(m: Method, ms: number, p: unknown): void {
    const e = this.calls.get(m) ?? { n: 0, ms: 0, maxMs: 0, items: 0 };
    e.n++;
    e.ms += ms;
    e.maxMs = Math.max(e.maxMs, ms);
    const params = p as { settlements?: unknown[]; jobs?: unknown[] } | undefined;
    e.items += params?.settlements?.length ?? params?.jobs?.length ?? 0;
    this.calls.set(m, e);
  }

  count(m: Method): number {
    return this.calls.get(m)?.n ?? 0;
  }

  table(title: string, jobs: number): Table {
    return {
      title,
      headers: ["store call", "calls", "per 1k jobs", "event loop held, total", "mean", "max"],
      rows: [...this.calls.entries()].map(([m, e]) => [
        m,
        e.n.toLocaleString("en-US"),
        ((1000 * e.n) / jobs).toFixed(1),
        `${e.ms.toFixed(0)} ms`,
        `${(e.ms / e.n).toFixed(2)} ms`,
        `${e.maxMs.toFixed(1)} ms`,
      ]),
    };
  }
}
