import { timingSafeEqual } from "node:crypto";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signatureOf, type WebhookBody } from "./signature.js";

/**
 * Request headers as frameworks hand them over: a Fetch `Headers` (Next.js route handlers,
 * Hono, Deno), or a plain record such as Node's `IncomingHttpHeaders` (node:http, Express,
 * Fastify). Names in a record are matched case-insensitively.
 */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** What verifyWebhook needs. */
export interface VerifyWebhookParams {
  /**
   * The tenant's signing secret (`whsec_...`), or several while a rotation is under way
   * (the new one and the old one): a request signed with any of them is accepted.
   */
  readonly secret: string | readonly string[];
  /** The request's headers. */
  readonly headers: WebhookHeaders;
  /** The raw body exactly as received (not re-serialised JSON): a string or bytes. */
  readonly body: string | Uint8Array;
  /** Largest accepted distance between `Duetime-Timestamp` and now, in seconds. Default 300. */
  readonly toleranceSec?: number;
  /** Now, in Unix seconds. Default the system clock; for tests. */
  readonly nowSec?: number;
}

/** A verified delivery: the JSON body duetime sent, and when it signed it. */
export interface WebhookDelivery extends WebhookBody {
  /** `Duetime-Timestamp`: when the attempt was signed, Unix seconds. */
  readonly timestamp: number;
}

/** Why a request was refused. */
export type WebhookRefusal =
  "missing-header" | "bad-timestamp" | "outside-tolerance" | "bad-signature" | "bad-body";

/** A request that is not an authentic, fresh duetime delivery: answer it 401 (or 400). */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  constructor(
    readonly reason: WebhookRefusal,
    message: string,
  ) {
    super(message);
  }
}

const DEFAULT_TOLERANCE_SEC = 300;
// Unix seconds of up to 12 digits: longer text cannot be a timestamp and is not parsed.
const TIMESTAMP = /^\d{1,12}$/;
const SIGNATURE_PART = /^\s*v1=([0-9a-f]{64})\s*$/i;

/**
 * Checks that a request is a duetime webhook signed with `secret` (or one of several) no
 * further than `toleranceSec` from now, and returns its parsed body. Signatures are compared
 * in constant time, against every `v1=` value of `Duetime-Signature`. Throws
 * WebhookVerificationError naming the reason otherwise.
 */
export function verifyWebhook(params: VerifyWebhookParams): WebhookDelivery {
  const secrets = typeof params.secret === "string" ? [params.secret] : params.secret;
  if (secrets.length === 0 || secrets.some((s) => typeof s !== "string" || s === "")) {
    throw new TypeError("verifyWebhook: secret must be a non-empty string or list of them");
  }
  const tolerance = params.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError(`verifyWebhook: toleranceSec must be seconds >= 0, got ${tolerance}`);
  }
  const timestampText = headerOf(params.headers, TIMESTAMP_HEADER);
  const signature = headerOf(params.headers, SIGNATURE_HEADER);
  if (timestampText === undefined || signature === undefined) {
    const missing = timestampText === undefined ? "Duetime-Timestamp" : "Duetime-Signature";
    throw new WebhookVerificationError("missing-header", `no ${missing} header`);
  }
  if (!TIMESTAMP.test(timestampText)) {
    throw new WebhookVerificationError("bad-timestamp", "Duetime-Timestamp is not Unix seconds");
  }
  const timestamp = Number(timestampText);
  const now = params.nowSec ?? Date.now() / 1000;
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      "outside-tolerance",
      `Duetime-Timestamp is ${Math.round(Math.abs(now - timestamp))} s from now (tolerance ${tolerance} s)`,
    );
  }
  const given = signaturesIn(signature);
  const matches = secrets.some((secret) => {
    const expected = signatureOf(secret, timestamp, params.body);
    return given.some((g) => timingSafeEqual(g, expected));
  });
  if (!matches) {
    throw new WebhookVerificationError("bad-signature", "no Duetime-Signature matches the secret");
  }
  return { ...deliveryBody(params.body), timestamp };
}

/** The 32-byte MACs of every well-formed `v1=` part of the header. */
function signaturesIn(header: string): Buffer[] {
  const out: Buffer[] = [];
  for (const part of header.split(",")) {
    const m = SIGNATURE_PART.exec(part);
    if (m) out.push(Buffer.from(m[1]!, "hex"));
  }
  return out;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value === undefined) {
    const found = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = found === undefined ? undefined : record[found];
  }
  return typeof value === "string" ? value : value?.join(",");
}

/** The signed body as JSON; authentic, so a parse failure means a sender other than duetime. */
function deliveryBody(body: string | Uint8Array): WebhookBody {
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError("bad-body", "the body is not JSON");
  }
  const d = parsed as Partial<WebhookBody> | null;
  if (d === null || typeof d !== "object" || typeof d.id !== "string") {
    throw new WebhookVerificationError("bad-body", "the body is not a duetime delivery");
  }
  return {
    id: d.id,
    key: d.key ?? null,
    tenant: String(d.tenant),
    dueAt: String(d.dueAt),
    attempt: Number(d.attempt),
    payload: d.payload,
  };
}
