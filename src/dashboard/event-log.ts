import type { JobChange } from "../api/scheduler.js";

/** A change with its number in its tenant's own sequence (the SSE `id`). */
export interface NumberedChange {
  readonly seq: number;
  readonly change: JobChange;
}

interface TenantCursor {
  /** Number of the tenant's latest change (0 before its first). */
  seq: number;
  /** Highest number of the tenant's changes that fell out of the ring (0 when none did). */
  evictedThrough: number;
}

/**
 * The recent changes of every tenant, each tenant numbered on its own (1, 2, 3...): a shared
 * sequence would tell a tenant, through the gaps between its own ids, how busy the others
 * are. One ring of the last `capacity` changes of all tenants bounds the memory; per tenant
 * only its latest number and the latest number the ring dropped are kept (two numbers for
 * each tenant that ever changed something in this process), which is what tells whether a
 * reconnecting client's gap can still be filled.
 */
export class TenantEventLog {
  private readonly ring: (NumberedChange | undefined)[];
  /** Changes appended so far; the next one goes to `written % capacity`. */
  private written = 0;
  private readonly tenants = new Map<string, TenantCursor>();

  constructor(private readonly capacity: number) {
    this.ring = new Array<NumberedChange | undefined>(capacity);
  }

  /** Numbers the change in its tenant's sequence and keeps it, dropping the oldest kept. */
  append(change: JobChange): NumberedChange {
    let cursor = this.tenants.get(change.tenant);
    if (!cursor) {
      cursor = { seq: 0, evictedThrough: 0 };
      this.tenants.set(change.tenant, cursor);
    }
    const n: NumberedChange = { seq: ++cursor.seq, change };
    const slot = this.written % this.capacity;
    const dropped = this.ring[slot];
    if (dropped) this.tenants.get(dropped.change.tenant)!.evictedThrough = dropped.seq;
    this.ring[slot] = n;
    this.written++;
    return n;
  }

  /** Number of the tenant's latest change (0 before its first). */
  latest(tenant: string): number {
    return this.tenants.get(tenant)?.seq ?? 0;
  }

  /**
   * The tenant's changes after number `last`, oldest first; null when they cannot all be
   * given: some fell out of the ring, or `last` is not one of this process's numbers (an id
   * from before a restart, or made up).
   */
  after(tenant: string, last: number): NumberedChange[] | null {
    const cursor = this.tenants.get(tenant) ?? { seq: 0, evictedThrough: 0 };
    if (!Number.isSafeInteger(last) || last < cursor.evictedThrough || last > cursor.seq) {
      return null;
    }
    const out: NumberedChange[] = [];
    if (last === cursor.seq) return out;
    const kept = Math.min(this.written, this.capacity);
    for (let i = this.written - kept; i < this.written; i++) {
      const n = this.ring[i % this.capacity]!;
      if (n.change.tenant === tenant && n.seq > last) out.push(n);
    }
    return out;
  }
}
