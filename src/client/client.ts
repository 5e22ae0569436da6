import { parseRetryAfter } from "../core/retry-after.js";
import { OPERATIONS, type components, type operations } from "./api-types.js";
import {
  DuetimeApiError,
  DuetimeConnectionError,
  DuetimeResponseError,
  type ApiErrorFields,
} from "./errors.js";

type Schemas = components["schemas"];
export type Job = Schemas["Job"];
export type JobInput = Schemas["JobInput"];
export type RescheduleInput = Schemas["RescheduleInput"];
export type JobCreated = Schemas["JobCreated"];
export type JobOutcome = Schemas["JobOutcome"];
export type BatchCreated = Schemas["BatchCreated"];
export type JobPage = Schemas["JobPage"];
export type Stats = Schemas["Stats"];
export type ChangePage = Schemas["ChangePage"];
export type ListJobsQuery = NonNullable<operations["listJobs"]["parameters"]["query"]>;
export type StatsQuery = NonNullable<operations["getStats"]["parameters"]["query"]>;
export type ChangesQuery = NonNullable<operations["listChanges"]["parameters"]["query"]>;

type IfMatch = { ifMatch?: number | string; signal?: AbortSignal };

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

type Operation = keyof typeof OPERATIONS;
type Op<O extends Operation> = O extends keyof operations ? operations[O] : never;
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : unknown;
type SuccessOf<O extends Operation> = JsonOf<
  Op<O>["responses"][Extract<keyof Op<O>["responses"], 200 | 201 | 202 | 204>]
>;

/** What one call of an operation sends. */
export interface CallInput<O extends Operation> {
  readonly path?: NonNullable<Op<O>["parameters"]["path"]>;
  readonly query?: NonNullable<Op<O>["parameters"]["query"]>;
  readonly body?: JsonOf<NonNullable<Op<O>["requestBody"]>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

interface Resolved {
  readonly url: string;
  readonly apiKey: string;
  readonly retries: number;
  readonly maxRetryDelayMs: number;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
}

/** Base wait before the first retry when the server gives no Retry-After, in ms. */
const BACKOFF_BASE_MS = 250;

/**
 * A typed client of the duetime HTTP API (`duetime/client`), on fetch. Its types are
 * generated from the server's /openapi.json; `call` reaches every operation by its
 * operationId, the named methods cover the jobs (by id and by key), batch, reschedule, cancel,
 * change-feed and stats routes.
 * Error answers throw DuetimeApiError (status, code, field, expected, received); 429 and
 * 503 are retried after their Retry-After.
 */
export class DuetimeClient {
  readonly #o: Resolved;

  constructor(options: ClientOptions) {
    this.#o = resolveOptions(options);
  }

  /** The server's base URL, without trailing slashes. */
  get url(): string {
    return this.#o.url;
  }

  /**
   * Schedules one job. Without a `key`, the client gives the job a random one, so a create
   * retried after a 429 or 503 returns the first job (`created: false`) instead of a second.
   */
  createJob(input: JobInput, options: { signal?: AbortSignal } = {}): Promise<JobCreated> {
    return this.call("createJob", { body: withKey(input), ...options });
  }

  /** Schedules up to 1000 jobs, all or nothing; keyless items get keys as in createJob. */
  createJobs(jobs: readonly JobInput[], options: { signal?: AbortSignal } = {}) {
    return this.call("createJobs", { body: { jobs: jobs.map(withKey) }, ...options });
  }

  async getJob(id: string, options: { signal?: AbortSignal } = {}): Promise<Job> {
    return (await this.call("getJob", { path: { id }, ...options })).job;
  }

  listJobs(query: ListJobsQuery = {}, options: { signal?: AbortSignal } = {}): Promise<JobPage> {
    return this.call("listJobs", { query, ...options });
  }

  /**
   * Moves a pending job. `ifMatch` (the job's version, or its ETag) applies the change only
   * if the job is still at that version; otherwise the answer is a 412 DuetimeApiError.
   */
  rescheduleJob(id: string, input: RescheduleInput, options: IfMatch = {}): Promise<JobOutcome> {
    const { ifMatch, ...rest } = options;
    return this.call("rescheduleJob", {
      path: { id },
      body: input,
      headers: ifMatchHeader(ifMatch),
      ...rest,
    });
  }

  /** Cancels a pending job; a job already firing or finished is a 409 (`code` too-late). */
  cancelJob(id: string, options: { signal?: AbortSignal } = {}): Promise<JobOutcome> {
    return this.call("cancelJob", { path: { id }, ...options });
  }

  /** The job holding an idempotency key (the latest that took it); a 404 names `key`. */
  async getJobByKey(key: string, options: { signal?: AbortSignal } = {}): Promise<Job> {
    return (await this.call("getJobByKey", { path: { key }, ...options })).job;
  }

  /** rescheduleJob for the job holding `key`, with the same outcomes and If-Match check. */
  rescheduleJobByKey(key: string, input: RescheduleInput, options: IfMatch = {}) {
    const { ifMatch, ...rest } = options;
    return this.call("rescheduleJobByKey", {
      path: { key },
      body: input,
      headers: ifMatchHeader(ifMatch),
      ...rest,
    });
  }

  /** cancelJob for the job holding `key`. */
  cancelJobByKey(key: string, options: { signal?: AbortSignal } = {}): Promise<JobOutcome> {
    return this.call("cancelJobByKey", { path: { key }, ...options });
  }

  /**
   * A page of the tenant's change feed after a cursor (from the oldest kept without one);
   * pass the page's `next` as `after` to read on. An expired cursor is a 410 (`oldest`).
   */
  listChanges(query: ChangesQuery = {}, options: { signal?: AbortSignal } = {}) {
    return this.call("listChanges", { query, ...options });
  }

  getStats(query: StatsQuery = {}, options: { signal?: AbortSignal } = {}): Promise<Stats> {
    return this.call("getStats", { query, ...options });
  }

  /** Calls any operation of the API by its operationId. */
  async call<O extends Operation>(operation: O, input: CallInput<O> = {}): Promise<SuccessOf<O>> {
    const { method, path } = OPERATIONS[operation];
    const url = this.#o.url + fillPath(path, input.path) + queryString(input.query);
    const headers: Record<string, string> = {
      accept: "application/json",
      authorization: `Bearer ${this.#o.apiKey}`,
      ...(input.body === undefined ? {} : { "content-type": "application/json" }),
      ...input.headers,
    };
    const body = input.body === undefined ? undefined : JSON.stringify(input.body);
    for (let attempt = 0; ; attempt++) {
      const res = await this.#send(url, { method, headers, body, signal: input.signal });
      if (res.ok) return (await successBody(res)) as SuccessOf<O>;
      const error = await apiError(res);
      const wait = retryWait(error, attempt, this.#o);
      if (wait === null) throw error;
      await sleep(wait, input.signal);
    }
  }

  async #send(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(this.#o.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    try {
      return await this.#o.fetch(url, { ...init, signal });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw new DuetimeConnectionError(this.#o.url, err);
    }
  }
}

/** A client of the duetime HTTP API at `options.url`. */
export function createClient(options: ClientOptions): DuetimeClient {
  return new DuetimeClient(options);
}

function resolveOptions(o: ClientOptions): Resolved {
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

function withKey(input: JobInput): JobInput {
  return input.key === undefined
    ? { ...input, key: `client-${globalThis.crypto.randomUUID()}` }
    : input;
}

function fillPath(template: string, params: object | undefined): string {
  const values = (params ?? {}) as Record<string, unknown>;
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = values[name];
    if (v === undefined) throw new TypeError(`duetime client: path parameter ${name} is missing`);
    return encodeURIComponent(String(v));
  });
}

function queryString(query: object | undefined): string {
  const p = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) p.set(name, String(value));
  }
  const s = p.toString();
  return s === "" ? "" : `?${s}`;
}

function ifMatchHeader(ifMatch: number | string | undefined): Record<string, string> {
  if (ifMatch === undefined) return {};
  return { "if-match": typeof ifMatch === "number" ? `"${ifMatch}"` : ifMatch };
}

async function successBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  if (!(res.headers.get("content-type") ?? "").includes("json")) return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new DuetimeResponseError(res.status, `HTTP ${res.status} with a body that is not JSON`);
  }
}

async function apiError(res: Response): Promise<DuetimeApiError> {
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
function retryWait(error: DuetimeApiError, attempt: number, o: Resolved): number | null {
  if ((error.status !== 429 && error.status !== 503) || attempt >= o.retries) return null;
  if (error.retryAfterMs !== null) {
    return error.retryAfterMs <= o.maxRetryDelayMs ? error.retryAfterMs : null;
  }
  const ceiling = Math.min(o.maxRetryDelayMs, BACKOFF_BASE_MS * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
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
