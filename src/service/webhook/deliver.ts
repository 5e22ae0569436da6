import { Agent, request, errors as undiciErrors } from "undici";
import type { Job } from "../../core/job.js";
import type { Handler, HandlerContext } from "../../engine/dispatcher.js";
import type { FairShare } from "../../engine/fair-queue.js";
import {
  InfrastructureError,
  PermanentJobError,
  RetryLaterError,
} from "../../engine/handler-errors.js";
import { InvalidOptionError } from "../../core/errors.js";
import { parseRetryAfter } from "../../core/retry-after.js";
import { injectTraceHeaders } from "../../engine/tracing.js";
import type { LookupFunction } from "node:net";
import type { Logger } from "../../engine/logger.js";
import { guardedLookup, PrivateAddressError } from "./address-guard.js";
import { deliverableTarget } from "./target.js";
import {
  ATTEMPT_HEADER,
  JOB_ID_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  signatureHeader,
  type WebhookBody,
} from "../../webhooks/signature.js";

/** Options of webhook delivery. */
export interface WebhookOptions {
  /**
   * Resolves the tenant's signing secret (created on first use). Required. A rejection is
   * not a delivery attempt: the job goes back unattempted (see InfrastructureError).
   */
  readonly secretFor: (tenant: string) => Promise<string>;
  /**
   * Per-attempt timeout in ms, for each of: connecting, the answer's headers after the
   * request is sent, and each read of its body. Counted from when the request goes out on a
   * connection, never while it waits for one. Default 10000.
   */
  readonly timeoutMs?: number;
  /** Allow targets on private, loopback and link-local addresses. Default false. */
  readonly allowPrivateTargets?: boolean;
  /** Longest Retry-After honoured, in ms (longer ones are capped). Default 86400000 (a day). */
  readonly maxRetryAfterMs?: number;
  /** Open connections per origin (all tenants together). Default 64. */
  readonly connectionsPerOrigin?: number;
  /**
   * Deliveries one tenant runs at once to one origin (the engine's fair share: the tenant's
   * other origins and other tenants keep their turns while this one is slow). Default
   * connectionsPerOrigin.
   */
  readonly concurrencyPerOrigin?: number;
  /** Told about every attempt (metrics). */
  readonly onAttempt?: (a: DeliveryAttempt) => void;
  /**
   * Where refused deliveries are logged with the internal address they resolved to (the
   * job's lastError names only its host). Default: not logged.
   */
  readonly logger?: Logger;
  /**
   * Resolves target names, dns.lookup-compatible (called with `all: true`). Default
   * dns.lookup. Tests resolve names to chosen addresses with it, without DNS.
   */
  readonly lookup?: LookupFunction;
  /** Clock for the signature timestamp, epoch ms. Default Date.now. */
  readonly now?: () => number;
}

/** What one delivery attempt did. */
export interface DeliveryAttempt {
  /** `unavailable`: nothing was sent, the signing secret could not be read. */
  readonly outcome: "delivered" | "retry" | "permanent" | "refused" | "unavailable";
  /** HTTP status, or null when no response came (timeout, connection error, refused). */
  readonly status: number | null;
  readonly durationMs: number;
}

export interface WebhookDelivery {
  /** The scheduler handler for URL targets (`scheduler.handleOther`). */
  readonly handler: Handler;
  /** Its fair share: one lane per tenant and origin (`handleOther(handler, { fairShare })`). */
  readonly fairShare: FairShare;
  /**
   * Closes the connection pool at once: requests still open are destroyed, not awaited
   * (called once the scheduler has stopped, when a request still open belongs to a delivery
   * it gave up on; agent.close() would wait for a slow receiver's answer).
   */
  close(): Promise<void>;
}

/**
 * Delivers fired jobs as signed HTTP POSTs. 2xx is success (the status is kept as the job's
 * result); 5xx, 408, 429, timeouts and connection errors are retried by the engine with
 * backoff and jitter (RetryLaterError when the target sent Retry-After); any other status is
 * permanent (PermanentJobError: dead at once). Redirects are not followed.
 */
export function createWebhookDelivery(options: WebhookOptions): WebhookDelivery {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const allowPrivate = options.allowPrivateTargets ?? false;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 86_400_000;
  const now = options.now ?? Date.now;
  const connections = positiveInt(options.connectionsPerOrigin, "connectionsPerOrigin", 64);
  const concurrency = positiveInt(
    options.concurrencyPerOrigin,
    "concurrencyPerOrigin",
    connections,
  );
  // headersTimeout and bodyTimeout run only while the request is on a connection; a timer
  // started with the attempt (AbortSignal.timeout) also counted the wait for a free one.
  const agent = new Agent({
    connections,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    connect: allowPrivate
      ? options.lookup === undefined
        ? {}
        : { lookup: options.lookup }
      : { lookup: guardedLookup(options.lookup) },
  });
  const report = (a: DeliveryAttempt): void => options.onAttempt?.(a);
  /** A refusal: the job reads only its own host; the address goes to the server log. */
  const refuse = (job: Job, refused: PrivateAddressError, durationMs: number): never => {
    report({ outcome: "refused", status: null, durationMs });
    options.logger?.warn(
      {
        id: job.id,
        tenant: job.tenant,
        host: refused.hostname,
        address: refused.address,
        range: refused.range,
      },
      "webhook delivery refused: the target resolves to an internal address",
    );
    throw new PermanentJobError(refused.message);
  };

  const handler: Handler = async (job: Job, ctx: HandlerContext) => {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const target = deliverableTarget(job, allowPrivate);
    if ("kind" in target) {
      if (target.kind === "refused") return refuse(job, target.error, 0);
      report({ outcome: "permanent", status: null, durationMs: 0 });
      throw new PermanentJobError(target.message);
    }
    const url = target.url;
    const secret = await signingSecret(options, job.tenant, () =>
      report({ outcome: "unavailable", status: null, durationMs: elapsed() }),
    );
    const { body, headers } = signedRequest(
      job,
      target.headers,
      ctx.attempt,
      secret,
      Math.floor(now() / 1000),
    );
    // the engine's signal: the handler timeout (from the attempt's start) or a hard stop
    const signal = ctx.signal;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, {
        method: "POST",
        headers,
        body,
        dispatcher: agent,
        signal,
        maxRedirections: 0,
      });
    } catch (err) {
      const refused = findPrivateAddressError(err);
      if (refused) return refuse(job, refused, elapsed());
      report({ outcome: "retry", status: null, durationMs: elapsed() });
      const why = signal.aborted
        ? `aborted: ${describeAbort(signal.reason)}`
        : describeNetworkError(err, timeoutMs);
      throw new Error(`webhook ${url.host}: ${why}`, {
        cause: err,
      });
    }
    const status = res.statusCode;
    if (status >= 200 && status < 300) {
      await res.body.dump().catch(() => undefined);
      const durationMs = elapsed();
      report({ outcome: "delivered", status, durationMs });
      return { status, durationMs };
    }
    const snippet = await readSnippet(res.body);
    const message = `webhook ${url.host} answered HTTP ${status}${snippet ? `: ${snippet}` : ""}`;
    if (status >= 500 || status === 408 || status === 429) {
      report({ outcome: "retry", status, durationMs: elapsed() });
      const retryAfterMs = parseRetryAfter(headerValue(res.headers["retry-after"]), now());
      if (retryAfterMs !== null) {
        throw new RetryLaterError(message, Math.min(retryAfterMs, maxRetryAfterMs));
      }
      throw new Error(message);
    }
    report({ outcome: "permanent", status, durationMs: elapsed() });
    throw new PermanentJobError(message);
  };

  const fairShare: FairShare = { keyOf: originOf, concurrency };
  return { handler, fairShare, close: () => agent.destroy() };
}

/** The lane of a webhook job: its target's origin (the target as written when not a URL). */
function originOf(job: Job): string {
  try {
    return new URL(job.target).origin;
  } catch {
    return job.target;
  }
}

function positiveInt(value: number | undefined, name: string, dflt: number): number {
  if (value === undefined) return dflt;
  if (!Number.isInteger(value) || value < 1) {
    throw new InvalidOptionError(name, "an integer of at least 1", value);
  }
  return value;
}

/**
 * The tenant's secret, or an InfrastructureError: a secret that cannot be read (its
 * database is down) says nothing about the webhook, so it must not spend an attempt nor
 * read as the target's failure.
 */
async function signingSecret(
  options: WebhookOptions,
  tenant: string,
  onUnavailable: () => void,
): Promise<string> {
  try {
    return await options.secretFor(tenant);
  } catch (err) {
    onUnavailable();
    if (err instanceof InfrastructureError) throw err;
    throw new InfrastructureError("signing secret unavailable (details in the server log)", {
      cause: err,
    });
  }
}

/** The body and headers of one attempt, signed with the tenant's secret. */
function signedRequest(
  job: Job,
  jobHeaders: Readonly<Record<string, string>>,
  attempt: number,
  secret: string,
  timestamp: number,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    id: job.id,
    key: job.key,
    tenant: job.tenant,
    dueAt: new Date(job.dueAt).toISOString(),
    attempt,
    payload: job.payload,
  } satisfies WebhookBody);
  const headers: Record<string, string> = {
    ...jobHeaders,
    "content-type": "application/json",
    "user-agent": "duetime-webhook/1",
    [JOB_ID_HEADER]: job.id,
    [ATTEMPT_HEADER]: String(attempt),
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: signatureHeader(secret, timestamp, body),
  };
  // The attempt's span is active here: the receiver's trace joins it (traceparent, tracestate).
  injectTraceHeaders(headers);
  return { body, headers };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  let text = "";
  try {
    for await (const chunk of body) {
      text += chunk.toString("utf8");
      if (text.length >= 200) break;
    }
  } catch {
    // a broken body changes nothing: the status decides
  } finally {
    body.destroy();
  }
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? `${flat.slice(0, 197)}...` : flat;
}

function findPrivateAddressError(err: unknown): PrivateAddressError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof PrivateAddressError) return e;
  }
  return null;
}

function describeAbort(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError ||
    (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError"))
  ) {
    return `no answer within ${timeoutMs} ms (timeout)`;
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
