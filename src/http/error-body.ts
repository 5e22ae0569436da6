import { describeReceived } from "../core/errors.js";

/**
 * The one shape of every error answer of the service and the dashboard,
 * `{ error: { code, field, expected, received, message } }`: the field at fault, what was
 * expected and what came in (described in words, never echoed whole). Built here only, so
 * the API, the dashboard, fastify's own rejections and Node's parser rejections agree.
 */
export interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly field: string;
    readonly expected: string;
    readonly received: string;
    readonly message: string;
  };
}

/** What an error answer says, before it is put in the shape. */
export interface ErrorFacts {
  readonly code: string;
  readonly field: string;
  readonly expected: string;
  readonly received: unknown;
  /** Default: "<field>: expected <expected>, received <received>". */
  readonly message?: string;
}

export function errorBody(f: ErrorFacts): ErrorBody {
  const received = describeReceived(f.received);
  return {
    error: {
      code: f.code,
      field: f.field,
      expected: f.expected,
      received,
      message: f.message ?? `${f.field}: expected ${f.expected}, received ${received}`,
    },
  };
}
