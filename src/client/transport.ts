import { parseRetryAfter } from "../core/retry-after.js";
import { DuetimeApiError, DuetimeResponseError, type ApiErrorFields } from "./errors.js";

/**
 * The client's transport (client.ts's methods sit on it): its options, the path, query and
 * If-Match of a request, the reading of an answer and the retry rule of 429 and 503.
 */

/** Options of createClient. */
export interface ClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080`. Required. */
  readonly url: string;
  /** An API key (`duetime keys create`), sent as a Bearer token. Required. */
  readonly apiKey: string;
  /** Retries of an answer 429 or 503, each after its `Retry-After` when given. Default 3. */
  readonly retries?: number;
  /**
   * Longest wait before a retry, in ms. A `Retry-After` asking for longer is not waited
   * out: the error is thrown at once, carrying `retryAfterMs`. Default 30000.
   */
  readonly maxRetryDelayMs?: number;
  /** Timeout of each attempt, in ms. Default 30000. */
  readonly timeoutMs?: number;
  /** The fetch implementation. Default the global fetch. */
  readonly fetch?: typeof fetch;
}

/** The options with their defaults, frozen. */
export interface Resolved {
  readonly url: string;
  readonly apiKey: string;
  readonly retries: number;
  readonly maxRetryDelayMs: number;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
}

/** Base wait before the first retry when the server gives no Retry-After, in ms. */
const BACKOFF_BASE_MS = 250;

export function resolveOptions(o: ClientOptions): Resolved {
  if (typeof o.url !== "string" || !/^https?:\/\//i.test(o.url)) {
    throw new TypeError(`duetime client: url must be an http(s) URL, got ${String(o.url)}`);
  }
  if (typeof o.apiKey !== "string" || o.apiKey === "") {
    throw new TypeError("duetime client: apiKey is required");
  }
  const count = (v: number | undefined, name: string, fallback: number): number => {
    if (v === undefined) return fallback;
    if (!Number.isInteger(v) || v < 0)
      throw new TypeError(`duetime client: ${name} must be an integer >= 0, got ${v}`);
    return v;
  };
  return Object.freeze({
    url: withoutTrailingSlashes(o.url),
    apiKey: o.apiKey,
    retries: count(o.retries, "retries", 3),
    maxRetryDelayMs: count(o.maxRetryDelayMs, "maxRetryDelayMs", 30_000),
    timeoutMs: count(o.timeoutMs, "timeoutMs", 30_000),
    fetch: o.fetch ?? globalThis.fetch,
  });
}

/** `url` without its trailing slashes; a scan from the end, as /\/+$/ is quadratic on "////x". */
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return url.slice(0, end);
}

export function fillPath(template: string, params: object | undefined): string {
  const values = (params ?? {}) as Record<string, unknown>;
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = values[name];
    if (v === undefined) throw new TypeError(`duetime client: path parameter ${name} is missing`);
    return encodeURIComponent(String(v));
  });
}

export function queryString(query: object | undefined): string {
  const p = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) p.set(name, String(value));
  }
  const s = p.toString();
  return s === "" ? "" : `?${s}`;
}

export function ifMatchHeader(ifMatch: number | string | undefined): Record<string, string> {
  if (ifMatch === undefined) return {};
  return { "if-match": typeof ifMatch === "number" ? `"${ifMatch}"` : ifMatch };
}

export async function successBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  if (!(res.headers.get("content-type") ?? "").includes("json")) return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new DuetimeResponseError(res.status, `HTTP ${res.status} with a body that is not JSON`);
  }
}

export async function apiError(res: Response): Promise<DuetimeApiError> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // a proxy's HTML error page: keep the text as the body
  }
  const fields = (body as { error?: Partial<ApiErrorFields> } | null)?.error ?? {
    message: `HTTP ${res.status}: ${text.slice(0, 200)}`,
  };
  const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"), Date.now());
  return new DuetimeApiError(res.status, fields, body, retryAfterMs);
}

/** How long to wait before retrying, or null to throw: only 429 and 503 are retried. */
export function retryWait(error: DuetimeApiError, attempt: number, o: Resolved): number | null {
  if ((error.status !== 429 && error.status !== 503) || attempt >= o.retries) return null;
  if (error.retryAfterMs !== null) {
    return error.retryAfterMs <= o.maxRetryDelayMs ? error.retryAfterMs : null;
  }
  const ceiling = Math.min(o.maxRetryDelayMs, BACKOFF_BASE_MS * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener("abort", abort);
      resolve();
    }
    function abort(): void {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener("abort", abort, { once: true });
  });
}
