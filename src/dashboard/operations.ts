import { operationView } from "../api/operation-view.js";
import type { Operation, Scheduler } from "../api/scheduler.js";
import { OperationNotFoundError } from "../core/errors.js";
import { OPERATION_STATES } from "../core/operation.js";
import { readQuery } from "../core/query-params.js";
import { errorAnswer, type Answer } from "./answers.js";

/**
 * The bulk operations page's endpoints (docs/dashboard.md): each is one call of the
 * Scheduler's operations API for the key's tenant, answered in the one operation view of
 * the REST API (src/api/operation-view.ts), so the page reads either. The body of a start is
 * the library's OperationInput, validated there (errors name the field).
 */

function isActive(op: Operation): boolean {
  return op.state === "queued" || op.state === "running";
}

/**
 * Starts an operation: 202 while it runs in the background, 200 when it ended at once (a
 * small count) or its key was held (the REST API's answers).
 */
export async function startOperation(s: Scheduler, tenant: string, body: unknown): Promise<Answer> {
  const { operation: op, created } = await s.startOperation(body as never, { tenant });
  const status = created && isActive(op) ? 202 : 200;
  return { status, body: { operation: operationView(op), created } };
}

/** Query of /v1/dashboard/operations: by state, newest first, a page at a time. */
const OPERATIONS_QUERY = {
  state: { kind: "enum", of: OPERATION_STATES },
  cursor: { kind: "text", max: 64 },
  limit: { kind: "int", min: 1, max: 1000 },
} as const;

/** The tenant's recent operations, newest first (20 unless `limit` says otherwise). */
export async function listOperationRows(
  s: Scheduler,
  tenant: string,
  query: unknown,
): Promise<Answer> {
  const q = readQuery(query, OPERATIONS_QUERY);
  const page = await s.listOperations({
    tenant,
    limit: q.limit ?? 20,
    ...(q.state === undefined ? {} : { state: q.state }),
    ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
  });
  return {
    status: 200,
    body: { operations: page.operations.map(operationView), nextCursor: page.nextCursor },
  };
}

/** One operation and its progress, or 404 (another tenant's reads as missing). */
export async function operationDetail(s: Scheduler, tenant: string, id: string): Promise<Answer> {
  const op = await s.getOperation(id, { tenant });
  return op ? { status: 200, body: { operation: operationView(op) } } : operationNotFound(id);
}

/** Cancels a queued or running operation after its batch in flight; an ended one is answered as it is. */
export async function cancelOperation(s: Scheduler, tenant: string, id: string): Promise<Answer> {
  try {
    const op = await s.cancelOperation(id, { tenant });
    return { status: 200, body: { operation: operationView(op) } };
  } catch (err) {
    if (err instanceof OperationNotFoundError) return operationNotFound(id);
    throw err;
  }
}

function operationNotFound(id: string): Answer {
  return errorAnswer(404, "not-found", {
    field: "id",
    expected: "the id of one of your operations",
    received: id,
    message: `operation ${id} not found`,
  });
}
