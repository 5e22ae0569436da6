import type { Clock } from "../core/clock.js";
import {
  InvalidJobError,
  OperationKeyConflictError,
  OperationNotFoundError,
} from "../core/errors.js";
import {
  OPERATION_KINDS,
  newOperation,
  OPERATION_STATES,
  type Operation,
  type OperationState,
} from "../core/operation.js";
import {
  sameOperationRequest,
  validateOperationInput,
  type OperationInput,
} from "../core/operation-input.js";
import { validateTenant } from "../core/schedule-input.js";
import { optionalInteger, optionalString, requireObject, requireString } from "../core/validate.js";
import type { Store } from "../store/store.js";

export type {
  Operation,
  OperationFilter,
  OperationKind,
  OperationParams,
  OperationState,
} from "../core/operation.js";
export type { OperationInput } from "../core/operation-input.js";

/** Options of startOperation. */
export interface StartOperationOptions {
  /** The tenant whose jobs it acts on. Default: the scheduler's default tenant. */
  readonly tenant?: string;
}

/** What startOperation answers. */
export interface StartedOperation {
  /** The record: the new one, or the one already started with the input's key. */
  readonly operation: Operation;
  /** False when the input's key was held: nothing new was started. */
  readonly created: boolean;
}

export interface OperationsQuery {
  readonly tenant?: string;
  readonly state?: OperationState;
  /** The previous page's nextCursor. */
  readonly cursor?: string;
  /** 1 to 1000. Default 100. */
  readonly limit?: number;
}

export interface OperationsPage {
  /** Newest first. */
  readonly operations: Operation[];
  readonly nextCursor: string | null;
}

/**
 * A count answers at once when it is done within this many jobs read (the rest runs in the
 * background like any operation): a dry run of a small selection needs no polling.
 */
const INLINE_COUNT_JOBS = 20_000;

/**
 * Bulk operations by filter behind the Scheduler's methods (src/core/operation.ts): the
 * input validated once here, the record stored, and its batches left to the engine's
 * OperationRunner (or run here, `runToEnd`, by a caller without a started engine).
 */
export class BulkOperations {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly newId: () => string,
    private readonly d: {
      readonly defaultTenant: string;
      readonly timeZone: string;
      readonly batchSize: number;
      /** The runner should look at once (an operation was queued). */
      readonly wake: () => void;
    },
  ) {}

  /**
   * Stores the operation; a `key` one of the tenant's operations holds answers that one
   * (created false) when the input is the same request, and refuses a different one
   * (OperationKeyConflictError): nothing is started either way.
   */
  async start(
    input: OperationInput | unknown,
    opts: StartOperationOptions = {},
  ): Promise<StartedOperation> {
    const tenant = opts.tenant === undefined ? this.d.defaultTenant : validateTenant(opts.tenant);
    const now = this.clock.now();
    const zone = { timeZone: this.d.timeZone };
    const def = validateOperationInput(input, { now, ...zone });
    const { operation: op, created } = await this.store.operationsInsert({
      operation: newOperation({ id: this.newId(), tenant, ...def }, now),
    });
    if (!created) {
      if (!sameOperationRequest(input, op, zone)) {
        throw new OperationKeyConflictError(op.key!, op);
      }
      return { operation: op, created: false };
    }
    if (!OPERATION_KINDS[op.kind].writes) {
      const counted = await this.runToEnd(op.id, { maxJobs: INLINE_COUNT_JOBS });
      if (counted.state !== "queued" && counted.state !== "running") {
        return { operation: counted, created: true };
      }
    }
    this.d.wake();
    return { operation: op, created: true };
  }

  async get(id: string, opts: { tenant?: string } = {}): Promise<Operation | null> {
    requireString(id, "id", { max: 64 });
    return this.store.operationGet({
      id,
      ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
    });
  }

  async list(q: OperationsQuery = {}): Promise<OperationsPage> {
    requireObject(q, "query");
    const limit = optionalInteger(q.limit, "limit", 1, 1000) ?? 100;
    if (q.state !== undefined && !OPERATION_STATES.includes(q.state)) {
      throw new InvalidJobError("state", `one of ${OPERATION_STATES.join(", ")}`, q.state);
    }
    const before = optionalString(q.cursor, "cursor", { max: 64 });
    const rows = await this.store.operationsList({
      limit: limit + 1,
      ...(q.tenant === undefined ? {} : { tenant: q.tenant }),
      ...(q.state === undefined ? {} : { states: [q.state] }),
      ...(before === undefined ? {} : { beforeId: before }),
    });
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { operations: page, nextCursor: more ? page[page.length - 1]!.id : null };
  }

  /** Cancels a queued or running operation (a batch in flight finishes first). */
  async cancel(id: string, opts: { tenant?: string } = {}): Promise<Operation> {
    requireString(id, "id", { max: 64 });
    const op = await this.store.operationCancel({
      id,
      now: this.clock.now(),
      ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
    });
    if (!op) throw new OperationNotFoundError(id);
    return op;
  }

  /**
   * Runs the operation's batches here until it ends (or `maxJobs` were read), calling
   * `onProgress` after each: for a caller with no started engine (the CLI on a local file).
   * Safe beside a runner: each batch is its own transaction on the record.
   */
  async runToEnd(
    id: string,
    opts: { maxJobs?: number; onProgress?: (op: Operation) => void } = {},
  ): Promise<Operation> {
    let read = 0;
    for (;;) {
      const r = await this.store.operationStep({
        id,
        now: this.clock.now(),
        limit: this.d.batchSize,
      });
      if (!r) throw new OperationNotFoundError(id);
      opts.onProgress?.(r.operation);
      read += r.scanned;
      const active = r.operation.state === "queued" || r.operation.state === "running";
      // an active operation read nothing when its store waited (Store.operationStep): again
      if (!active || read >= (opts.maxJobs ?? Infinity)) return r.operation;
    }
  }
}

/** The Scheduler's methods for bulk operations (docs/managing-jobs.md). */
export interface OperationMethods {
  /**
   * Starts a bulk operation (count, cancel, reschedule, retry, erase) on the jobs of one
   * tenant matching `filter` (docs/managing-jobs.md): resolves to its record, queued (its
   * batches run on a started scheduler's runner), or for a small count already done. With
   * `key`, a start the tenant already made with that key answers the first record
   * (`created: false`); the same key with another kind, filter or parameters throws
   * OperationKeyConflictError.
   */
  startOperation(input: OperationInput, opts?: StartOperationOptions): Promise<StartedOperation>;

  /** One operation record, or null. With `tenant`, another tenant's is null too. */
  getOperation(id: string, opts?: { tenant?: string }): Promise<Operation | null>;

  /** A page of operation records, newest first, by tenant and state. */
  listOperations(query?: OperationsQuery): Promise<OperationsPage>;

  /** Cancels a queued or running operation: no batch starts after the one in flight. */
  cancelOperation(id: string, opts?: { tenant?: string }): Promise<Operation>;

  /**
   * Runs an operation's batches in this call until it ends, `onProgress` after each: for a
   * caller that does not start the scheduler (the CLI on a local file).
   */
  runOperation(id: string, onProgress?: (op: Operation) => void): Promise<Operation>;
}

/** The operation methods of a Scheduler whose BulkOperations `operations` gives. */
export function operationMethods<S>(
  operations: (self: S) => BulkOperations,
): OperationMethods & ThisType<S> {
  return {
    startOperation(input, opts = {}) {
      return operations(this).start(input, opts);
    },
    getOperation(id, opts = {}) {
      return operations(this).get(id, opts);
    },
    listOperations(query = {}) {
      return operations(this).list(query);
    },
    cancelOperation(id, opts = {}) {
      return operations(this).cancel(id, opts);
    },
    runOperation(id, onProgress) {
      return operations(this).runToEnd(id, onProgress === undefined ? {} : { onProgress });
    },
  };
}
