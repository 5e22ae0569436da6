import { isoInstant } from "../core/instant-text.js";
import type { JobStatus } from "../core/job.js";
import type { Operation, OperationKind, OperationState } from "../core/operation.js";

/**
 * An operation record as the HTTP API, the CLI's --json and the dashboard show it: ISO
 * times (filter bounds and a set due time included), the store's cursor left out (a
 * position meaningful to the store alone).
 */
export interface OperationView {
  id: string;
  tenant: string;
  /** The idempotency key it was started with, or null. */
  key: string | null;
  kind: OperationKind;
  filter: {
    tags?: string[];
    target?: string;
    status?: JobStatus[];
    dueFrom?: string;
    dueTo?: string;
    keyPrefix?: string;
    all?: boolean;
  };
  dueAt: string | null;
  shiftMs: number | null;
  of: OperationKind | null;
  state: OperationState;
  scanned: number;
  changed: number;
  skipped: number;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export function operationView(op: Operation): OperationView {
  const f = op.filter;
  return {
    id: op.id,
    tenant: op.tenant,
    key: op.key,
    kind: op.kind,
    filter: {
      ...(f.tags === undefined ? {} : { tags: [...f.tags] }),
      ...(f.target === undefined ? {} : { target: f.target }),
      ...(f.status === undefined ? {} : { status: [...f.status] }),
      ...(f.dueFrom === undefined ? {} : { dueFrom: isoInstant(f.dueFrom) }),
      ...(f.dueTo === undefined ? {} : { dueTo: isoInstant(f.dueTo) }),
      ...(f.keyPrefix === undefined ? {} : { keyPrefix: f.keyPrefix }),
      ...(f.all === true ? { all: true } : {}),
    },
    dueAt: op.params.dueAt === undefined ? null : isoInstant(op.params.dueAt),
    shiftMs: op.params.shiftMs ?? null,
    of: op.params.of ?? null,
    state: op.state,
    scanned: op.scanned,
    changed: op.changed,
    skipped: op.skipped,
    error: op.error,
    createdAt: isoInstant(op.createdAt),
    updatedAt: isoInstant(op.updatedAt),
    finishedAt: op.finishedAt === null ? null : isoInstant(op.finishedAt),
  };
}
