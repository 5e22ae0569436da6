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
