import { OPERATIONS, type components, type operations } from "./api-types.js";
import { DuetimeConnectionError } from "./errors.js";
import {
  apiError,
  fillPath,
  ifMatchHeader,
  queryString,
  resolveOptions,
  retryWait,
  sleep,
  successBody,
  type ClientOptions,
  type Resolved,
} from "./transport.js";

export type { ClientOptions } from "./transport.js";

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
export type Schedule = Schemas["Schedule"];
export type ScheduleInput = Schemas["ScheduleInput"];
export type SchedulePatch = Schemas["SchedulePatch"];
export type ScheduleCreated = Schemas["ScheduleCreated"];
export type SchedulePage = Schemas["SchedulePage"];
export type PreviewInput = Schemas["PreviewInput"];
export type OccurrencePage = Schemas["OccurrencePage"];
export type Pause = Schemas["Pause"];
export type PauseInput = Schemas["PauseInput"];
export type PauseResumed = Schemas["PauseResumed"];
export type ListSchedulesQuery = NonNullable<operations["listSchedules"]["parameters"]["query"]>;
export type NextOccurrencesQuery = NonNullable<
  operations["nextOccurrences"]["parameters"]["query"]
>;
export type ListJobsQuery = NonNullable<operations["listJobs"]["parameters"]["query"]>;
export type StatsQuery = NonNullable<operations["getStats"]["parameters"]["query"]>;
export type ChangesQuery = NonNullable<operations["listChanges"]["parameters"]["query"]>;
export type ListPausesQuery = NonNullable<operations["listPauses"]["parameters"]["query"]>;

type Signal = { signal?: AbortSignal };
type IfMatch = Signal & { ifMatch?: number | string };

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

/**
 * A typed client of the duetime HTTP API (`duetime/client`), on fetch. Its types are
 * generated from the server's /openapi.json; `call` reaches every operation by its
 * operationId, the named methods cover the jobs (by id and by key), batch, reschedule, cancel,
 * schedules (recurring series), pauses, change-feed and stats routes.
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

  /**
   * Creates a recurring series. Without a `key`, the client gives it a random one, so a
   * create retried after a 429 or 503 returns the first series instead of a second.
   */
  createSchedule(input: ScheduleInput, options: Signal = {}): Promise<ScheduleCreated> {
    return this.call("createSchedule", { body: withKey(input), ...options });
  }

  async getSchedule(id: string, options: Signal = {}): Promise<Schedule> {
    return (await this.call("getSchedule", { path: { id }, ...options })).schedule;
  }

  listSchedules(query: ListSchedulesQuery = {}, options: Signal = {}): Promise<SchedulePage> {
    return this.call("listSchedules", { query, ...options });
  }

  /** Changes a series' rule or template; `ifMatch` as for rescheduleJob (412 when stale). */
  updateSchedule(id: string, changes: SchedulePatch, options: IfMatch = {}): Promise<Schedule> {
    return this.#change("updateSchedule", id, options, changes);
  }

  /** Pauses a series (its pending occurrence is cancelled). */
  pauseSchedule(id: string, options: IfMatch = {}): Promise<Schedule> {
    return this.#change("pauseSchedule", id, options);
  }

  /** Resumes a paused series from its first occurrence after now. */
  resumeSchedule(id: string, options: IfMatch = {}): Promise<Schedule> {
    return this.#change("resumeSchedule", id, options);
  }

  /** Skips a series' pending occurrence; the one after it is written. */
  skipNextOccurrence(id: string, options: IfMatch = {}): Promise<Schedule> {
    return this.#change("skipNextOccurrence", id, options);
  }

  /** Deletes a series (its pending occurrence is cancelled); resolves to it as it was. */
  deleteSchedule(id: string, options: IfMatch = {}): Promise<Schedule> {
    return this.#change("deleteSchedule", id, options);
  }

  /** The next occurrences of a stored series (`count` 1-100, after `from`, default now). */
  nextOccurrences(id: string, query: NextOccurrencesQuery = {}, options: Signal = {}) {
    return this.call("nextOccurrences", { path: { id }, query, ...options });
  }

  /** The next occurrences of a rule and zone not stored. */
  previewOccurrences(input: PreviewInput, options: Signal = {}): Promise<OccurrencePage> {
    return this.call("previewOccurrences", { body: input, ...options });
  }

  async #change(
    operation:
      | "updateSchedule"
      | "pauseSchedule"
      | "resumeSchedule"
      | "skipNextOccurrence"
      | "deleteSchedule",
    id: string,
    options: IfMatch,
    body?: SchedulePatch,
  ): Promise<Schedule> {
    const { ifMatch, ...rest } = options;
    const answer = await this.call(operation, {
      path: { id },
      headers: ifMatchHeader(ifMatch),
      ...(body === undefined ? {} : { body }),
      ...rest,
    } as CallInput<typeof operation>);
    return answer.schedule;
  }

  /**
   * Pauses the tenant's jobs, one target's or one tag's (`scope`): they are held, never
   * claimed, until `resumePause`; `onResume` (default fire) says what those due meanwhile do.
   */
  async createPause(input: PauseInput, options: Signal = {}): Promise<Pause> {
    return (await this.call("createPause", { body: input, ...options })).pause;
  }

  /**
   * The tenant's pauses in creation order (one page: `limit`, default 100; see
   * listPausesPage for the next cursor); by default the active and resuming ones.
   */
  async listPauses(query: ListPausesQuery = {}, options: Signal = {}): Promise<Pause[]> {
    return (await this.call("listPauses", { query, ...options })).pauses;
  }

  /** A page of the tenant's pauses (`limit`, `cursor`) and the cursor of the next page. */
  async listPausesPage(
    query: ListPausesQuery = {},
    options: Signal = {},
  ): Promise<{ pauses: Pause[]; nextCursor: string | null }> {
    const page = await this.call("listPauses", { query, ...options });
    return { pauses: page.pauses, nextCursor: page.nextCursor };
  }

  async getPause(id: string, options: Signal = {}): Promise<Pause> {
    return (await this.call("getPause", { path: { id }, ...options })).pause;
  }

  /**
   * Resumes a pause: the answer is the pause (`resuming`) and how many held jobs it gives back
   * by which policy (`releasing`); a pause resumed before answers as it is.
   */
  resumePause(id: string, options: Signal = {}): Promise<PauseResumed> {
    return this.call("resumePause", { path: { id }, ...options });
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

function withKey<T extends { key?: string }>(input: T): T {
  return input.key === undefined
    ? { ...input, key: `client-${globalThis.crypto.randomUUID()}` }
    : input;
}
