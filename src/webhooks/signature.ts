import { createHmac } from "node:crypto";

/**
 * The webhook signature scheme (docs/webhooks.md), shared by the service that signs and the
 * receiver helper that verifies: the signed text is `<timestamp>.<raw body>`, the timestamp in
 * Unix seconds as sent in `Duetime-Timestamp`, and `Duetime-Signature` carries
 * `v1=<hex HMAC-SHA256 with the tenant's secret>`. Binding the timestamp into the MAC lets a
 * receiver reject replays older than its tolerance.
 */
export const SIGNATURE_HEADER = "duetime-signature";
export const TIMESTAMP_HEADER = "duetime-timestamp";
export const JOB_ID_HEADER = "duetime-job-id";
export const ATTEMPT_HEADER = "duetime-attempt";

/** The JSON body of a delivery, as the service signs it and a receiver reads it back. */
export interface WebhookBody {
  /** The job id (also in `Duetime-Job-Id`): deduplicate on it. */
  readonly id: string;
  /** The idempotency key given at creation, or null. */
  readonly key: string | null;
  /** The tenant that owns the job. */
  readonly tenant: string;
  /** When the job was due (ISO 8601, UTC). */
  readonly dueAt: string;
  /** 1 for the first delivery, 2 for the first retry... */
  readonly attempt: number;
  /** The job's payload as given at creation. */
  readonly payload: unknown;
}

/** HMAC-SHA256 of `timestamp.body` with `secret`; bytes are signed as they are, text as UTF-8. */
export function signatureOf(secret: string, timestamp: number, body: string | Uint8Array): Buffer {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();
}

/** The `Duetime-Signature` header value for a delivery. */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `v1=${signatureOf(secret, timestamp, body).toString("hex")}`;
}
