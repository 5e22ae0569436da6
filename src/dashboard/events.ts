import type { ServerResponse } from "node:http";
import type { JobChange, Scheduler } from "../api/scheduler.js";
import { Described, InvalidOptionError } from "../core/errors.js";
import { errorAnswer, type Answer } from "./answers.js";
import { TenantEventLog, type NumberedChange } from "./event-log.js";

/** Options of the live stream. */
export interface EventStreamOptions {
  /** Interval of the heartbeat comment that keeps proxies from closing an idle stream, in ms. Default 15000. */
  readonly heartbeatMs?: number;
  /** Recent changes kept (all tenants together) for clients that reconnect with `Last-Event-ID`. Default 10000. */
  readonly replay?: number;
  /** Reconnect delay suggested to EventSource clients (the `retry:` field), in ms. Default 3000. */
  readonly retryMs?: number;
  /** Most streams open at once on this server; one more answers 503 with Retry-After. Default 1000. */
  readonly maxStreams?: number;
  /** Most streams open at once per API key; one more answers 429 with Retry-After. Default 10. */
  readonly maxStreamsPerKey?: number;
  /**
   * How often the keys of open streams are checked again, in ms: the streams of a key that
   * was revoked meanwhile end within this interval. Default 2000.
   */
  readonly recheckMs?: number;
}

/**
 * Of these stream owners (the `owner` given to `admit`), the ones whose credentials are still
 * valid; the streams of every other owner are ended. Called every `recheckMs` with the owners
 * of the open streams, never twice at once. A rejection keeps every stream until the next
 * check (an unreachable key store is not a revocation).
 */
export type StreamOwnersCheck = (owners: readonly string[]) => Promise<Iterable<string>>;

interface Client {
  readonly tenant: string;
  /** Who opened it (the service: the API key's id), for the per-key cap and re-checks. */
  readonly owner: string;
  readonly res: ServerResponse;
}

/** A client that has this much unsent data is too slow and is dropped (it may reconnect). */
const MAX_BUFFERED_BYTES = 1 << 20;
/** Retry-After of a refused stream, in s: streams are long-lived, a slot frees slowly. */
const FULL_RETRY_AFTER_S = 5;

/**
 * Fans the scheduler's `changed` feed out to Server-Sent Events clients, each seeing only
 * its own tenant's changes, numbered in its tenant's own sequence (the SSE `id`, see
 * TenantEventLog); the recent changes are kept so a client that reconnects with
 * `Last-Event-ID` misses nothing; when the gap is older than that, it is told to `reset`
 * (reload its view) instead. Streams are capped per key and in total (`admit`), and the keys
 * of open streams are checked again every `recheckMs`, so revoking a key ends its streams.
 *
 * The feed is this process's changes: with several service nodes on one database, a client
 * sees the changes made through the node it is connected to.
 */
/** The content type of `GET /v1/events` (and of its HEAD answer). */
export const EVENT_STREAM_TYPE = "text/event-stream; charset=utf-8";

export class EventStream {
  private readonly clients = new Set<Client>();
  private readonly perOwner = new Map<string, number>();
  private readonly log: TenantEventLog;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly recheck: NodeJS.Timeout | null;
  private checking = false;
  private readonly listener = (c: JobChange) => this.publish(c);
  private readonly opts: Required<EventStreamOptions>;

  constructor(
    private readonly scheduler: Scheduler,
    options: EventStreamOptions = {},
    private readonly ownersValid?: StreamOwnersCheck,
  ) {
    this.opts = Object.freeze({
      heartbeatMs: options.heartbeatMs ?? 15_000,
      replay: options.replay ?? 10_000,
      retryMs: options.retryMs ?? 3_000,
      maxStreams: options.maxStreams ?? 1000,
      maxStreamsPerKey: options.maxStreamsPerKey ?? 10,
      recheckMs: options.recheckMs ?? 2000,
    });
    for (const [name, value] of Object.entries(this.opts)) {
      if (!Number.isInteger(value) || value < 1) {
        throw new InvalidOptionError(`events.${name}`, "a positive integer", value);
      }
    }
    this.log = new TenantEventLog(this.opts.replay);
    scheduler.on("changed", this.listener);
    this.heartbeat = setInterval(() => this.beat(), this.opts.heartbeatMs);
    this.heartbeat.unref();
    this.recheck = ownersValid
      ? setInterval(() => void this.checkOwners(), this.opts.recheckMs)
      : null;
    this.recheck?.unref();
  }

  /** Number of connected clients. */
  get size(): number {
    return this.clients.size;
  }

  /**
   * Null when one more stream of `owner` may open now, else the refusal to answer: 429 past
   * the per-key cap, 503 past the server's. Call it right before `attach` (no await between:
   * the count it checks is the one `attach` adds to).
   */
  admit(owner: string): Answer | null {
    const mine = this.perOwner.get(owner) ?? 0;
    if (mine >= this.opts.maxStreamsPerKey) {
      return full(429, "too-many-streams", {
        field: "authorization",
        expected: `at most ${this.opts.maxStreamsPerKey} open event streams per API key`,
        received: new Described(`${mine} open already`),
        message: `too many event streams: this key has ${mine} open (close one, or retry after ${FULL_RETRY_AFTER_S} s)`,
      });
    }
    if (this.clients.size >= this.opts.maxStreams) {
      return full(503, "unavailable", {
        field: "events",
        expected: `at most ${this.opts.maxStreams} open event streams on this server`,
        received: new Described(`${this.clients.size} open already`),
        message: `the server has no event stream free: retry after ${FULL_RETRY_AFTER_S} s`,
      });
    }
    return null;
  }

  /**
   * Starts streaming to `res` (headers not yet sent) for `owner`, admitted by `admit`;
   * resumes after `lastEventId` if given.
   */
  attach(
    res: ServerResponse,
    tenant: string,
    owner: string,
    lastEventId: string | undefined,
  ): void {
    res.writeHead(200, {
      "content-type": EVENT_STREAM_TYPE,
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // nginx buffers responses by default, which would hold events back.
      "x-accel-buffering": "no",
    });
    res.write(`retry: ${this.opts.retryMs}\n`);
    res.write(
      frame("hello", {
        tenant,
        now: this.scheduler.now(),
        seq: this.log.latest(tenant),
      }),
    );
    const client: Client = { tenant, owner, res };
    this.clients.add(client);
    this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);
    res.on("close", () => this.drop(client));
    if (lastEventId !== undefined) this.replayAfter(client, lastEventId);
  }

  /** Ends every stream and stops listening (server shutdown). */
  close(): void {
    clearInterval(this.heartbeat);
    if (this.recheck) clearInterval(this.recheck);
    this.scheduler.off("changed", this.listener);
    for (const c of this.clients) c.res.end();
    this.clients.clear();
    this.perOwner.clear();
  }

  /**
   * One re-check of the open streams' owners (what the `recheckMs` interval runs): the
   * streams of owners `ownersValid` no longer lists get `event: revoked` and end. Resolves
   * to the number of streams ended.
   */
  async checkOwners(): Promise<number> {
    if (!this.ownersValid || this.checking || this.clients.size === 0) return 0;
    this.checking = true;
    try {
      const valid = new Set(await this.ownersValid([...this.perOwner.keys()]));
      let ended = 0;
      for (const c of this.clients) {
        if (valid.has(c.owner)) continue;
        c.res.end(frame("revoked", { reason: "the API key of this stream is no longer valid" }));
        this.drop(c);
        ended++;
      }
      return ended;
    } catch {
      return 0; // the key store is unreachable: checked again at the next interval
    } finally {
      this.checking = false;
    }
  }

  private drop(c: Client): void {
    if (!this.clients.delete(c)) return;
    const left = (this.perOwner.get(c.owner) ?? 1) - 1;
    if (left > 0) this.perOwner.set(c.owner, left);
    else this.perOwner.delete(c.owner);
  }

  private publish(change: JobChange): void {
    const n = this.log.append(change);
    for (const c of this.clients) if (c.tenant === change.tenant) this.send(c, n);
  }

  private replayAfter(client: Client, lastEventId: string): void {
    const missed = /^\d{1,15}$/.test(lastEventId)
      ? this.log.after(client.tenant, Number(lastEventId))
      : null;
    // A gap older than what is kept (or an id from before a restart) cannot be filled.
    if (missed === null) {
      client.res.write(frame("reset", { reason: "missed changes; reload the view" }));
      return;
    }
    for (const n of missed) this.send(client, n);
  }

  private send(c: Client, n: NumberedChange): void {
    if (c.res.writableLength > MAX_BUFFERED_BYTES) {
      this.drop(c);
      c.res.end();
      return;
    }
    c.res.write(frame("job", n.change, n.seq));
  }

  private beat(): void {
    const line = `: heartbeat ${this.scheduler.now()}\n\n`;
    for (const c of this.clients) c.res.write(line);
  }
}

function full(status: number, code: string, e: Parameters<typeof errorAnswer>[2]): Answer {
  const a = errorAnswer(status, code, e);
  return { ...a, headers: { "retry-after": String(FULL_RETRY_AFTER_S) } };
}

function frame(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
