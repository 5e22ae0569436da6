import type {
  Operation,
  OperationFilter,
  OperationKind,
  OperationParams,
  OperationState,
} from "../core/operation.js";

/**
 * An operation record as both stores keep it: one row of `operations`, these columns (the
 * same names in SQLite and PostgreSQL), filter and params as JSON text. Shared so the two
 * stores cannot read or write a record differently.
 */
export interface OperationRow {
  id: string;
  tenant: string;
  key: string | null;
  kind: OperationKind;
  filter: string;
  params: string;
  state: OperationState;
  scanned: number;
  changed: number;
  skipped: number;
  cursor: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export const OPERATION_COLUMNS: readonly (keyof OperationRow)[] = Object.freeze([
  "id",
  "tenant",
  "key",
  "kind",
  "filter",
  "params",
  "state",
  "scanned",
  "changed",
  "skipped",
  "cursor",
  "error",
  "created_at",
  "updated_at",
  "finished_at",
]);

export function operationToRow(o: Operation): OperationRow {
  return {
    id: o.id,
    tenant: o.tenant,
    key: o.key,
    kind: o.kind,
    filter: JSON.stringify(o.filter),
    params: JSON.stringify(o.params),
    state: o.state,
    scanned: o.scanned,
    changed: o.changed,
    skipped: o.skipped,
    cursor: o.cursor,
    error: o.error,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    finished_at: o.finishedAt,
  };
}

/** PostgreSQL answers bigint columns as strings: every count and time goes through Number. */
export function rowToOperation(r: OperationRow): Operation {
  return {
    id: r.id,
    tenant: r.tenant,
    key: r.key,
    kind: r.kind,
    filter: JSON.parse(r.filter) as OperationFilter,
    params: JSON.parse(r.params) as OperationParams,
    state: r.state,
    scanned: Number(r.scanned),
    changed: Number(r.changed),
    skipped: Number(r.skipped),
    cursor: r.cursor,
    error: r.error,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    finishedAt: r.finished_at === null ? null : Number(r.finished_at),
  };
}

/**
 * The record after a batch that read `scanned` jobs, changed and skipped some, and stopped
 * at `cursor`: done when the batch came back short (nothing left after the cursor).
 */
export function afterBatch(
  op: Operation,
  b: { scanned: number; changed: number; skipped: number; cursor: string | null; limit: number },
  now: number,
): Operation {
  const done = b.scanned < b.limit;
  return {
    ...op,
    state: done ? "done" : "running",
    scanned: op.scanned + b.scanned,
    changed: op.changed + b.changed,
    skipped: op.skipped + b.skipped,
    cursor: b.cursor ?? op.cursor,
    updatedAt: now,
    finishedAt: done ? now : null,
  };
}
