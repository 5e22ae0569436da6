import type { Clock } from "../core/clock.js";
import { ServiceLoop, type LoopGroup } from "../core/loop.js";
import {
  ACTIVE_OPERATION_STATES,
  type Operation,
  type OperationStepResult,
} from "../core/operation.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import { WorkCost } from "./work-cost.js";

/** Most active operations one pass reads (a batch each at most, oldest first). */
const MAX_PER_PASS = 16;
/**
 * Longest a pass should hold the event loop, in ms. A store that does its work before its
 * call returns (SQLite) holds the loop for the whole batch, and the timing wheel's jobs wait
 * behind it: a batch of 2,000 cancels held it 60-920 ms (bench/bulk-cancel.ts). So each
 * batch is sized to the budget from its operation's WorkCost (see batchFor), and a pass ends
 * once its batches held the loop that long: the next pass runs after the event loop's turn
 * (a pass that leaves work returns 0 to its loop, which waits for setImmediate), so due jobs
 * fire between batches. A store that works asynchronously (PostgreSQL) returns at once: its
 * batches grow to batchSize and one pass serves every active operation.
 */
const HOLD_BUDGET_MS = 20;
/** An operation's first batch, before its cost is known. */
const FIRST_BATCH = 100;
/**
 * The least a batch reads however slow its jobs are (below it the record's own read and
 * write, and the commit, dominate a batch).
 */
const MIN_BATCH = 25;

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
  /**
   * The timing wheel's WheelDriver.quietForUnlessDense: a batch that would hold the event
   * loop when the wheel next fires runs right after that fire instead, unless the wheel fires
   * more often than the batch lasts. Default: never waits.
   */
  readonly quietFor?: (ms: number) => Promise<void> | null;
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
  /** Per active operation: its last batch's size and how long its batches hold the loop. */
  private readonly sizing = new Map<string, { limit: number; cost: WorkCost }>();
  /** The operation the last pass served last: the next pass starts after it. */
  private lastServed = "";

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

  /**
   * A batch of each active operation, in turn from after the one served last, until the
   * batches have held the event loop HOLD_BUDGET_MS; resolves to how many are still active.
   */
  async runOnce(): Promise<number> {
    const active = await this.d.store.operationsList({
      states: ACTIVE_OPERATION_STATES,
      limit: MAX_PER_PASS,
    });
    // oldest first (the list is newest first), from after the last one served
    const oldest = active.reverse();
    const from = oldest.findIndex((op) => op.id > this.lastServed);
    const turn = from <= 0 ? oldest : [...oldest.slice(from), ...oldest.slice(0, from)];
    let left = 0;
    let heldMs = 0;
    for (const op of turn) {
      if (heldMs >= HOLD_BUDGET_MS) {
        left++; // its turn comes in the next pass
        continue;
      }
      const step = await this.stepOnce(op);
      heldMs += step.heldMs;
      if (step.active) left++;
    }
    return left;
  }

  /**
   * One batch of `op`, sized to the budget; whether it is still active after it. A batch
   * that would still hold the event loop when the timing wheel next fires waits for that
   * fire to be over (quietFor), as the watcher's claims and the settler's writes do.
   */
  private async stepOnce(op: Operation): Promise<{ heldMs: number; active: boolean }> {
    const was = this.sizing.get(op.id);
    const cost = was?.cost ?? new WorkCost(this.d.clock);
    const limit = batchFor(was?.cost.itemsWithin(HOLD_BUDGET_MS), was?.limit, this.d.batchSize);
    await this.d.quietFor?.(cost.estimateMs(limit));
    const now = this.d.clock.now();
    const r = await cost.timed(
      (step: OperationStepResult | null) => step?.scanned ?? 0,
      () => this.d.store.operationStep({ id: op.id, now, limit }),
    );
    const heldMs = cost.lastMs;
    this.lastServed = op.id;
    this.sizing.delete(op.id);
    if (!r) return { heldMs, active: false };
    const active = r.operation.state === "queued" || r.operation.state === "running";
    // an active operation that read nothing waited for its store: no progress to report
    if (r.scanned > 0 || !active) this.d.onProgress?.(r.operation);
    const moved = r.operation.changed > op.changed ? movedDueAt(r.operation, now) : null;
    if (moved !== null) this.d.onMoved?.(moved);
    if (active) this.sizing.set(op.id, { limit, cost });
    return { heldMs, active };
  }
}

/**
 * The size of an operation's next batch: the `fits` jobs its WorkCost expects to hold the
 * loop HOLD_BUDGET_MS (WorkCost.itemsWithin), at least MIN_BATCH, at most twice the last
 * batch (an estimate from a small batch may be too cheap) and at most `max`. FIRST_BATCH
 * before its first batch.
 */
export function batchFor(fits: number | undefined, last: number | undefined, max: number): number {
  if (fits === undefined || last === undefined) return Math.min(FIRST_BATCH, max);
  return Math.max(Math.min(MIN_BATCH, max), Math.min(max, 2 * last, fits));
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
