import type { Clock } from "../core/clock.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";
import { ACTIVE_OPERATION_STATES, type Operation } from "../core/operation.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";

/** Most active operations one pass serves (a batch each, oldest first). */
const MAX_PER_PASS = 16;
/**
 * Longest a batch should hold the event loop, in ms. A store that does its work before its
 * call returns (SQLite) holds the loop for the whole batch, and the timing wheel's jobs wait
 * behind it: a batch of 2,000 cancels held it 60-920 ms (bench/bulk-cancel.ts). An
 * operation's first batch reads MIN_BATCH jobs; a batch under the budget lets the next grow,
 * at most doubling, up to batchSize, and one over it shrinks the next to what fits. A store
 * that works asynchronously (PostgreSQL) returns at once, so its batches grow to batchSize.
 */
const HOLD_BUDGET_MS = 20;
/** An operation's first batch, and the least a shrunk one reads (below it the record's own writes dominate). */
const MIN_BATCH = 100;

/** What an OperationRunner is made of. */
export interface OperationRunnerDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Jobs each batch reads, at least 1. */
  readonly batchSize: number;
  /**
   * Pause in ms between looks for active operations while there are none here: another
   * node may have queued one (PostgreSQL). A start on this node wakes the runner at once.
   */
  readonly idleMs: number;
  /** The node's loops that recover together (see LoopGroup). Default: none. */
  readonly loops?: LoopGroup;
  /** Each record after a batch (progress events). */
  readonly onProgress?: (op: Operation) => void;
  /**
   * A batch may have made jobs due as early as `dueAt` (movedDueAt): the node's watcher
   * planned its sleep before they moved. Default: nothing.
   */
  readonly onMoved?: (dueAt: number) => void;
}

/**
 * Runs bulk operations (src/core/operation.ts) in the background: each pass runs one batch
 * (one store transaction) of each active operation, so several operations progress side
 * by side and firing gets the event loop back between batches. Active operations are read
 * from the store on every pass, so those queued or half done before a crash resume on start,
 * from their cursors; a cancelled one is simply no longer active.
 */
export class OperationRunner {
  private readonly loop: ServiceLoop;
  /** The next batch's size per active operation (see HOLD_BUDGET_MS). */
  private readonly limits = new Map<string, number>();

  constructor(private readonly d: OperationRunnerDeps) {
    this.loop = new ServiceLoop({
      name: "operation runner",
      clock: d.clock,
      logger: d.logger,
      ...(d.loops === undefined ? {} : { group: d.loops }),
      pass: async () => ((await this.runOnce()) > 0 ? 0 : this.d.idleMs),
    });
  }

  start(): void {
    this.loop.start(0);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** An operation was queued here: its first batch runs now. */
  wake(): void {
    this.loop.wake();
  }

  /** One batch of each active operation; resolves to how many are still active after it. */
  async runOnce(): Promise<number> {
    const active = await this.d.store.operationsList({
      states: ACTIVE_OPERATION_STATES,
      limit: MAX_PER_PASS,
    });
    let left = 0;
    // oldest first: the list is newest first
    for (const op of active.reverse()) {
      const limit = this.limits.get(op.id) ?? Math.min(MIN_BATCH, this.d.batchSize);
      const started = performance.now();
      const now = this.d.clock.now();
      const step = this.d.store.operationStep({ id: op.id, now, limit });
      const heldMs = performance.now() - started;
      const r = await step;
      this.limits.delete(op.id);
      if (!r) continue;
      this.d.onProgress?.(r.operation);
      const moved = r.operation.changed > op.changed ? movedDueAt(r.operation, now) : null;
      if (moved !== null) this.d.onMoved?.(moved);
      if (r.operation.state === "queued" || r.operation.state === "running") {
        left++;
        this.limits.set(op.id, nextBatch(limit, r.scanned, heldMs, this.d.batchSize));
      }
    }
    return left;
  }
}

/** The size of an operation's next batch after one of `limit` read `scanned` jobs holding the loop `heldMs`. */
export function nextBatch(limit: number, scanned: number, heldMs: number, max: number): number {
  if (scanned === 0 || heldMs <= 0) return limit;
  const fits = Math.floor((HOLD_BUDGET_MS * scanned) / heldMs);
  return Math.max(Math.min(MIN_BATCH, max), Math.min(max, 2 * limit, fits));
}

/**
 * The earliest due time a batch of `op` can have given a job: a retry's (now, unless it
 * names a time), a reschedule's time, or now for a shift earlier (a watcher pass then reads
 * the real next due time). Null when it can only have moved jobs later or finished them.
 */
export function movedDueAt(op: Operation, now: number): number | null {
  if (op.kind === "retry") return op.params.dueAt ?? now;
  if (op.kind !== "reschedule") return null;
  if (op.params.dueAt !== undefined) return op.params.dueAt;
  return (op.params.shiftMs ?? 0) < 0 ? now : null;
}
