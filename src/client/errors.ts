/** The error shape every duetime API error answers with (`{ error: {...} }`). */
export interface ApiErrorFields {
  readonly code: string;
  readonly field: string;
  readonly expected: string;
  readonly received: string;
  readonly message: string;
}

/**
 * The server answered with an error status: `status`, the API's `code`, `field`, `expected`
 * and `received`, and the whole parsed `body` (a 409 or 412 carries the job as it is; a
 * batch 400 lists every bad item in `errors`). Branch on `status` or `code`.
 */
export class DuetimeApiError extends Error {
  override readonly name = "DuetimeApiError";
  readonly code: string;
  readonly field: string;
  readonly expected: string;
  readonly received: string;

  constructor(
    readonly status: number,
    fields: Partial<ApiErrorFields>,
    readonly body: unknown,
    /** For 429 and 503: how long the server asked to wait, in ms, when it said. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(fields.message ?? `HTTP ${status}`);
    this.code = fields.code ?? `http-${status}`;
    this.field = fields.field ?? "";
    this.expected = fields.expected ?? "";
    this.received = fields.received ?? "";
  }
}

/** No answer: the server could not be reached, the connection broke, or the timeout passed. */
export class DuetimeConnectionError extends Error {
  override readonly name = "DuetimeConnectionError";
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? (cause.cause ?? cause.message) : cause;
    super(`cannot reach ${url}: ${String(reason)}`, { cause });
  }
}

/** The server answered 2xx with a body that is not the JSON the operation promises. */
export class DuetimeResponseError extends Error {
  override readonly name = "DuetimeResponseError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
