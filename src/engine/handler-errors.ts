/**
 * Errors a handler throws to steer what happens next. Any other throw is a failed attempt,
 * retried with backoff while attempts remain.
 */

/** The job can never succeed (a webhook answered 4xx, say): record it dead now, no retry. */
export class PermanentJobError extends Error {
  override readonly name = "PermanentJobError";
}

/** Failed, but the target said when to come back (HTTP Retry-After): retry after that delay. */
export class RetryLaterError extends Error {
  override readonly name = "RetryLaterError";
  constructor(
    message: string,
    /** Delay before the next attempt, in ms. */
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

/**
 * Nothing was attempted: something the handler depends on (a database, a secret store) was
 * unavailable before it could try. The job goes back to pending after a backoff without
 * spending an attempt, even on its last one; its last error says what failed. Name the
 * failing dependency in `message` (it is stored where the job's owner reads it) and keep
 * the details (addresses, credentials) in `cause`, which only the server log sees.
 */
export class InfrastructureError extends Error {
  override readonly name = "InfrastructureError";
  /** Delay before the job is claimed again, in ms, or null for the engine's default. */
  readonly retryAfterMs: number | null;

  constructor(
    message: string,
    options: {
      readonly cause?: unknown;
      /** Delay before the job is claimed again, in ms. Default: the first retry's backoff. */
      readonly retryAfterMs?: number;
    } = {},
  ) {
    super(message, "cause" in options ? { cause: options.cause } : undefined);
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}
