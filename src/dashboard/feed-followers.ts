import type { ChangesPage, StoredChange } from "../core/change.js";
import { ChangeCursorExpiredError } from "../core/errors.js";

/** One reader of a tenant's durable change feed (an open event stream). */
export interface FeedFollower {
  readonly tenant: string;
  /** The cursor after the last change given to it; moved on by `FeedFollowers` only. */
  cursor: string;
  /** False while it cannot take more now (its socket must drain first): it is skipped. */
  ready(): boolean;
  deliver(change: StoredChange): void;
  /**
   * Changes after its cursor were removed by retention before it read them: it is told, and
   * reads on from `err.oldest`.
   */
  expired(err: ChangeCursorExpiredError): void;
}

/** Reads one page of a tenant's feed after a cursor (Scheduler.changes). */
export type FeedPageReader = (tenant: string, after: string, limit: number) => Promise<ChangesPage>;

/** Pages read for one cursor in one pass, so one far-behind stream cannot hold the others back. */
const PAGES_PER_PASS = 10;

/**
 * Keeps every follower of the durable change feed up to date, in feed order, without gaps or
 * repeats: each follower holds its own cursor, and a pass reads the feed once per distinct
 * cursor of a tenant (followers that caught up share one cursor, so a tenant with many open
 * streams costs one read per pass), hands each change to the followers at that cursor, and
 * moves their cursors on. A tenant has at most one pass at a time; a wake during a pass
 * runs one more pass after it. Who wakes: the stream on every local change of the tenant
 * (so this node's changes arrive at once), and a timer every `pollMs` for the changes other
 * nodes wrote to the same store.
 */
export class FeedFollowers {
  private readonly byTenant = new Map<string, Set<FeedFollower>>();
  private readonly passes = new Map<string, { again: boolean }>();

  constructor(
    private readonly read: FeedPageReader,
    private readonly pageSize: number,
    /** Told of a read that failed (the store unreachable): the next wake tries again. */
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  add(f: FeedFollower): void {
    let set = this.byTenant.get(f.tenant);
    if (!set) this.byTenant.set(f.tenant, (set = new Set()));
    set.add(f);
    void this.wake(f.tenant);
  }

  remove(f: FeedFollower): void {
    const set = this.byTenant.get(f.tenant);
    if (!set?.delete(f)) return;
    if (set.size === 0) this.byTenant.delete(f.tenant);
  }

  /** Runs a pass for every tenant that has followers; resolves when they are done. */
  async wakeAll(): Promise<void> {
    await Promise.all([...this.byTenant.keys()].map((t) => this.wake(t)));
  }

  /** Runs a pass for `tenant` (or marks the running one to go again); resolves when done. */
  async wake(tenant: string): Promise<void> {
    const running = this.passes.get(tenant);
    if (running) {
      running.again = true;
      return;
    }
    const pass = { again: true };
    this.passes.set(tenant, pass);
    try {
      while (pass.again) {
        pass.again = false;
        if (await this.pass(tenant)) pass.again = true;
      }
    } catch (err) {
      this.onError(err);
    } finally {
      this.passes.delete(tenant);
    }
  }

  /** One pass over the tenant's cursors; true when some follower has more to read. */
  private async pass(tenant: string): Promise<boolean> {
    const groups = new Map<string, FeedFollower[]>();
    for (const f of this.byTenant.get(tenant) ?? []) {
      if (!f.ready()) continue;
      const g = groups.get(f.cursor);
      if (g) g.push(f);
      else groups.set(f.cursor, [f]);
    }
    let more = false;
    for (const [cursor, followers] of groups) {
      if (await this.catchUp(tenant, cursor, followers)) more = true;
    }
    return more;
  }

  private async catchUp(tenant: string, cursor: string, group: FeedFollower[]): Promise<boolean> {
    let after = cursor;
    for (let i = 0; i < PAGES_PER_PASS; i++) {
      let page: ChangesPage;
      try {
        page = await this.read(tenant, after, this.pageSize);
      } catch (err) {
        if (!(err instanceof ChangeCursorExpiredError)) throw err;
        for (const f of group) {
          f.cursor = err.oldest;
          f.expired(err);
        }
        return true;
      }
      // A follower that left (or stopped being ready) while the page was read gets no more.
      const live = group.filter((f) => this.byTenant.get(tenant)?.has(f) === true);
      for (const c of page.changes) for (const f of live) f.deliver(c);
      for (const f of live) f.cursor = page.next;
      if (page.changes.length < this.pageSize) return false;
      after = page.next;
      if (!live.every((f) => f.ready())) return true;
    }
    return true;
  }
}
