import client from "prom-client";
import { storageFullIn } from "../core/errors.js";
import type { Store } from "../stores/open-store.js";

/**
 * The calls whose success proves that storage takes creates again: a create that stored a
 * job, or the store's storage probe. Other writes do not: on a full disk a SQLite store
 * keeps claiming and settling in its released reserve (its ballast) while it refuses
 * creates, and a small write can land in free pages of a disk that refuses a larger one.
 */
const CHANGED: Partial<Record<keyof Store, (result: never) => boolean>> = {
  jobsInsert: (r: Awaited<ReturnType<Store["jobsInsert"]>>) => r.some((x) => x.created),
  storageProbe: () => true,
};

/** Backoff of the probe while storage is full: from 500 ms, doubling, up to 10 s. */
const PROBE_FIRST_MS = 500;
const PROBE_MAX_MS = 10_000;

/**
 * Whether the store's storage is full, as its answers show it: any call that fails with a
 * StorageFullError marks it full, and the next write that changed something (a job stored,
 * claimed, settled, moved, purged, or the store's storage probe) marks it fine again. The
 * readiness probe calls `recheck`, so a node that gets no traffic while it is not ready
 * still finds out that space is back. `/readyz` answers not-ready while it is full;
 * `/metrics` shows it (`duetime_storage_full`, `duetime_storage_full_errors_total`).
 */
export class StorageHealth {
  private fullSince: number | null = null;
  private lastError: string | null = null;
  private errors = 0;
  private refused: client.Counter | null = null;

  private watched: Store | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probeDelayMs = PROBE_FIRST_MS;
  private stopped = false;

  constructor(private readonly now: () => number = Date.now) {}

  /** Stops the probe loop (the store is closing). */
  stop(): void {
    this.stopped = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  /**
   * While full, tries the watched store's storage probe (one small write of its own): its
   * success marks storage fine again; while space is still missing it rejects with the
   * StorageFullError. Does nothing when storage is not full or the store has no probe.
   */
  async recheck(now: number): Promise<void> {
    if (this.fullSince === null || !this.watched?.storageProbe) return;
    await this.watched.storageProbe({ now });
  }

  /** True from a write refused for lack of space until a write succeeds again. */
  get full(): boolean {
    return this.fullSince !== null;
  }

  /** What is wrong, for /readyz, or null while storage takes writes. */
  problem(): string | null {
    if (this.fullSince === null) return null;
    return `${this.lastError ?? "storage is full"} (since ${new Date(this.fullSince).toISOString()}; writes resume once space is freed)`;
  }

  /** The store as is, every call watched for StorageFullError and for writes that succeed. */
  watch(store: Store): Store {
    const watched = new Proxy(store, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        const method = (value as (...a: unknown[]) => unknown).bind(target);
        const changed = CHANGED[prop as keyof Store] as ((r: unknown) => boolean) | undefined;
        return (...args: unknown[]) => {
          const result = method(...args);
          if (!(result instanceof Promise)) return result;
          return result.then(
            (r: unknown) => {
              if (this.fullSince !== null && changed?.(r)) this.fullSince = null;
              return r;
            },
            (err: unknown) => {
              const full = storageFullIn(err);
              if (full) this.markFull(full.message);
              throw err;
            },
          );
        };
      },
    });
    this.watched = watched;
    return watched;
  }

  /** The gauge and the counter of this state, in `registry`. */
  register(registry: client.Registry): void {
    const gauge: client.Gauge = new client.Gauge({
      name: "duetime_storage_full",
      help: "1 while the store's storage is full (from a write refused for lack of space until a write succeeds), else 0",
      registers: [registry],
      collect: () => gauge.set(this.full ? 1 : 0),
    });
    this.refused = new client.Counter({
      name: "duetime_storage_full_errors_total",
      help: "Store calls refused because storage was full",
      registers: [registry],
    });
    this.refused.inc(this.errors);
  }

  private markFull(message: string): void {
    this.errors++;
    this.refused?.inc();
    this.lastError = message;
    if (this.fullSince === null) {
      this.fullSince = this.now();
      this.probeDelayMs = PROBE_FIRST_MS;
    }
    this.armProbe();
  }

  /**
   * While full, the store's probe runs on a short backoff (unref'd: it never keeps a process
   * alive), so readiness and creates come back by themselves once space is freed, without
   * waiting for a request to try.
   */
  private armProbe(): void {
    if (this.probeTimer || this.stopped || !this.watched?.storageProbe) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      if (this.fullSince === null || this.stopped) return;
      this.recheck(this.now()).then(
        () => undefined,
        () => {
          this.probeDelayMs = Math.min(PROBE_MAX_MS, this.probeDelayMs * 2);
          this.armProbe();
        },
      );
    }, this.probeDelayMs);
    this.probeTimer.unref();
  }
}
