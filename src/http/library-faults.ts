import { operationView } from "../api/operation-view.js";
import { Described, OperationKeyConflictError, QuotaExceededError } from "../core/errors.js";
import { PauseNotFoundError, PausesUnsupportedError } from "../core/pause.js";

/** A library error as an HTTP answer: status, code, the standard fields, extras and headers. */
export interface LibraryFault {
  readonly status: number;
  readonly code: string;
  readonly field: string;
  readonly expected: string;
  readonly received: unknown;
  readonly message: string;
  /** Extra top-level fields of the answer (the quota's name, the operation holding a key). */
  readonly extra: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The answer to a typed library error that is not bad input, or null for any other error:
 * a quota refusal 429 with Retry-After, a missing (or another tenant's) pause 404, a store
 * without pauses 501, an operation key held by another request 409. Shared by the API's
 * error handler and the dashboard's, so the same refusal reads the same on both.
 */
export function libraryFault(err: unknown): LibraryFault | null {
  if (err instanceof QuotaExceededError) return quotaFault(err);
  if (err instanceof OperationKeyConflictError) return operationKeyFault(err);
  if (err instanceof PauseNotFoundError) return pauseNotFoundFault(err.id);
  if (err instanceof PausesUnsupportedError) {
    return fault(501, "not-implemented", "store", "a store with pauses", err.message, {
      received: new Described(`the ${err.storeKind} store`),
    });
  }
  return null;
}

/** 429 with Retry-After (whole seconds, at least 1): nothing was written. */
function quotaFault(err: QuotaExceededError): LibraryFault {
  const seconds = String(Math.max(1, Math.ceil(err.retryAfterMs / 1000)));
  return fault(429, "quota-exceeded", "tenant", err.expected, err.message, {
    received: new Described(err.received),
    extra: { quota: err.quota },
    headers: { "retry-after": seconds },
  });
}

/**
 * 409: the operation's idempotency key started another request (kind, filter or
 * parameters). Nothing was started; the answer carries the operation holding the key.
 */
function operationKeyFault(err: OperationKeyConflictError): LibraryFault {
  const held = err.held;
  const expected = `a new key, or the request that started operation ${held.id} with it (kind ${held.kind}, the same filter and parameters)`;
  return fault(409, "key-conflict", "key", expected, err.message, {
    received: err.key,
    extra: { outcome: "key-conflict", operation: operationView(held) },
  });
}

/** A missing pause and another tenant's read the same. */
function pauseNotFoundFault(id: string): LibraryFault {
  return fault(404, "not-found", "id", "the id of one of your pauses", `pause ${id} not found`, {
    received: id,
  });
}

function fault(
  status: number,
  code: string,
  field: string,
  expected: string,
  message: string,
  more: { received: unknown; extra?: Record<string, unknown>; headers?: Record<string, string> },
): LibraryFault {
  const { received, extra = {}, headers = {} } = more;
  return { status, code, field, expected, received, message, extra, headers };
}
