import { errorBody } from "../http/error-body.js";

/** An HTTP answer: status, JSON body and any extra headers. */
export interface Answer {
  readonly status: number;
  readonly body: unknown;
  /** Extra response headers, e.g. `retry-after` on a 429. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * An error answer in the REST API's one shape, `{ error: { code, field, expected, received,
 * message } }` plus extra top-level fields (the job, for too-late and version-conflict), so
 * a client handles dashboard and API errors alike.
 */
export function errorAnswer(
  status: number,
  code: string,
  e: { field: string; expected: string; received: unknown; message?: string },
  extra: Record<string, unknown> = {},
): Answer {
  // Fields read one by one: `e` may be an Error, whose message is not enumerable.
  const { field, expected, received, message } = e;
  return { status, body: { ...errorBody({ code, field, expected, received, message }), ...extra } };
}

export function notFound(id: string): Answer {
  return errorAnswer(404, "not-found", {
    field: "id",
    expected: "the id of one of your jobs",
    received: id,
    message: `job ${id} not found`,
  });
}
