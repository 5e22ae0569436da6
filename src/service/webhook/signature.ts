import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The webhook signature scheme (docs/webhooks.md): the signed text is
 * `<timestamp>.<raw body>`, the timestamp in Unix seconds as sent in `Duetime-Timestamp`,
 * and the header `Duetime-Signature` carries `v1=<hex HMAC-SHA256 with the tenant's secret>`.
 * Binding the timestamp into the MAC lets a receiver reject replays older than its tolerance.
 */
export const SIGNATURE_HEADER = "duetime-signature";
export const TIMESTAMP_HEADER = "duetime-timestamp";
export const JOB_ID_HEADER = "duetime-job-id";
export const ATTEMPT_HEADER = "duetime-attempt";

/** Hex HMAC-SHA256 of `timestamp.body` with `secret`. */
export function signatureOf(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/** The `Duetime-Signature` header value for a delivery. */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `v1=${signatureOf(secret, timestamp, body)}`;
}

/**
 * Receiver side, as docs/webhooks.md shows it: true when the signature matches and the
 * timestamp is within `toleranceSec` of `nowSec`.
 */
export function verifySignature(params: {
  secret: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  nowSec?: number;
  toleranceSec?: number;
}): boolean {
  const { secret, body, timestamp, signature } = params;
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) {
    return false;
  }
  const now = params.nowSec ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (params.toleranceSec ?? 300)) return false;
  const expected = Buffer.from(signatureOf(secret, Number(timestamp), body), "hex");
  return signature.split(",").some((part) => {
    const m = /^\s*v1=([0-9a-f]{64})\s*$/i.exec(part);
    if (!m) return false;
    return timingSafeEqual(Buffer.from(m[1]!, "hex"), expected);
  });
}
