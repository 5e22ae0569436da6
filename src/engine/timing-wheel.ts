/**
 * A hierarchical timing wheel (Varghese & Lauck; the layout Kafka's purgatory uses).
 *
 * Level 0 has `wheelSize` slots of `tickMs` each; every level above has slots as wide as
 * the whole level below. An entry goes into the lowest level whose span covers it; when a
 * higher-level slot comes due its entries cascade down to finer slots, until they land in
 * a level-0 slot that expires at their exact millisecond. Slots that hold entries sit in a
 * min-heap by expiry, so finding the next deadline is O(log slots) and an idle wheel never
 * ticks through empty slots. Adding is O(1) amortised; nothing is ever returned early:
 * `poll(now)` yields only entries with `at <= now`.
 */
export class TimingWheel<T> {
  private readonly root: Level<T>;
  private readonly heap: Slot<T>[] = [];
  private count = 0;

  constructor(startMs: number, options: { tickMs?: number; wheelSize?: number } = {}) {
    const tick = options.tickMs ?? 1;
    const size = options.wheelSize ?? 256;
    this.root = new Level<T>(tick, size, startMs, (slot) => heapPush(this.heap, slot));
  }

  /** Entries held. */
  get size(): number {
    return this.count;
  }

  /**
   * Adds an entry due at `at` (epoch ms). Returns false, without keeping it, when it is
   * already due at the wheel's current time: the caller should fire it now.
   */
  add(at: number, item: T): boolean {
    if (!this.root.add({ at, item })) return false;
    this.count++;
    return true;
  }

  /** Earliest slot expiry, or null when empty. Entries may be cascaded at that time rather than due. */
  nextExpiry(): number | null {
    return this.heap[0]?.expiration ?? null;
  }

  /**
   * The due time of the earliest entry, or null when empty. Not nextExpiry: a coarser
   * level's slot expires at its start, up to a whole slot (256 ms on level 1) before its
   * first entry is due, and only cascades its entries then. Slots in the heap are ordered by
   * expiry and every entry of a slot is due at or after it, so a subtree whose root expires
   * after the best entry found so far holds nothing earlier: the walk visits few slots.
   */
  earliestDue(): number | null {
    let best = Infinity;
    const stack = this.heap.length > 0 ? [0] : [];
    while (stack.length > 0) {
      const i = stack.pop()!;
      const slot = this.heap[i];
      if (!slot || slot.expiration >= best) continue;
      if (slot.minAt < best) best = slot.minAt;
      stack.push(2 * i + 1, 2 * i + 2);
    }
    return best === Infinity ? null : best;
  }

  /** Removes and returns every entry due at or before `now`, in due order. */
  poll(now: number): { at: number; item: T }[] {
    const due: { at: number; item: T }[] = [];
    for (;;) {
      const slot = this.heap[0];
      if (!slot || slot.expiration > now) break;
      heapPop(this.heap);
      this.root.advance(slot.expiration);
      const entries = slot.entries;
      slot.entries = [];
      slot.expiration = -1;
      slot.minAt = Infinity;
      for (const e of entries) {
        if (!this.root.add(e)) due.push(e);
      }
    }
    this.root.advance(now);
    this.count -= due.length;
    due.sort((a, b) => a.at - b.at);
    return due;
  }

  /** Removes and returns every entry, in due order (used when stopping). */
  drain(): { at: number; item: T }[] {
    const all: { at: number; item: T }[] = [];
    for (const slot of this.heap) {
      all.push(...slot.entries);
      slot.entries = [];
      slot.expiration = -1;
      slot.minAt = Infinity;
    }
    this.heap.length = 0;
    this.count = 0;
    all.sort((a, b) => a.at - b.at);
    return all;
  }
}

interface Entry<T> {
  at: number;
  item: T;
}

interface Slot<T> {
  expiration: number;
  entries: Entry<T>[];
  /** The earliest `at` among the entries (Infinity when empty). */
  minAt: number;
}

class Level<T> {
  private readonly interval: number;
  private readonly slots: Slot<T>[];
  private currentTime: number;
  private overflow: Level<T> | null = null;

  constructor(
    private readonly tickMs: number,
    private readonly wheelSize: number,
    startMs: number,
    private readonly onSlotArmed: (slot: Slot<T>) => void,
  ) {
    this.interval = tickMs * wheelSize;
    this.currentTime = startMs - (startMs % tickMs);
    this.slots = Array.from({ length: wheelSize }, () => ({
      expiration: -1,
      entries: [],
      minAt: Infinity,
    }));
  }

  add(e: Entry<T>): boolean {
    if (e.at < this.currentTime + this.tickMs) return false;
    if (e.at < this.currentTime + this.interval) {
      const virtualId = Math.floor(e.at / this.tickMs);
      const slot = this.slots[virtualId % this.wheelSize]!;
      slot.entries.push(e);
      if (e.at < slot.minAt) slot.minAt = e.at;
      const expiration = virtualId * this.tickMs;
      if (slot.expiration !== expiration) {
        slot.expiration = expiration;
        this.onSlotArmed(slot);
      }
      return true;
    }
    this.overflow ??= new Level<T>(
      this.interval,
      this.wheelSize,
      this.currentTime,
      this.onSlotArmed,
    );
    return this.overflow.add(e);
  }

  advance(time: number): void {
    if (time >= this.currentTime + this.tickMs) {
      this.currentTime = time - (time % this.tickMs);
      this.overflow?.advance(this.currentTime);
    }
  }
}

function heapPush<T>(heap: Slot<T>[], slot: Slot<T>): void {
  heap.push(slot);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]!.expiration <= heap[i]!.expiration) break;
    [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
    i = parent;
  }
}

function heapPop<T>(heap: Slot<T>[]): void {
  const last = heap.pop()!;
  if (heap.length === 0) return;
  heap[0] = last;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && heap[l]!.expiration < heap[m]!.expiration) m = l;
    if (r < heap.length && heap[r]!.expiration < heap[m]!.expiration) m = r;
    if (m === i) break;
    [heap[m], heap[i]] = [heap[i]!, heap[m]!];
    i = m;
  }
}
