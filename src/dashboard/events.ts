import type { ServerResponse } from "node:http";
import type { Scheduler } from "../api/scheduler.js";
import { parseResumeCursor, type StoredChange } from "../core/change.js";
import {
  ChangeCursorExpiredError,
  Described,
  DuetimeError,
  InvalidOptionError,
} from "../core/errors.js";
import { cursorExpired } from "../http/change-refusals.js";
import { errorAnswer, type Answer } from "./answers.js";
import { FeedFollowers, type FeedFollower } from "./feed-followers.js";

/** Options of the live stream. */
export interface EventStreamOptions {
  /** Interval of the heartbeat comment that keeps proxies from closing an idle stream, in ms. Default 15000. */
  readonly heartbeatMs?: number;
  /**
   * How often open streams read the durable feed for changes this process did not make
   * (other nodes on the same store), in ms. This node's own changes are read at once.
   * Default 1000.
   */
  readonly pollMs?: number;
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

interface Client extends FeedFollower {
  /** Who opened it (the service: the API key's id), for the per-key cap and re-checks. */
  readonly owner: string;
  /** Null until `open` has found where the stream starts and the headers are sent. */
  res: ServerResponse | null;
}

/** A client that has this much unsent data is too slow and is dropped (it may reconnect). */
const MAX_BUFFERED_BYTES = 1 << 20;
/** Retry-After of a refused stream, in s: streams are long-lived, a slot frees slowly. */
const FULL_RETRY_AFTER_S = 5;
const REVOKED = { reason: "the API key of this stream is no longer valid" };
/** Changes read per page of the feed. */
const PAGE = 500;

/** The content type of `GET /v1/events` (and of its HEAD answer). */
export const EVENT_STREAM_TYPE = "text/event-stream; charset=utf-8";

/**
 * Streams the durable change feed (Scheduler.changes) to Server-Sent Events clients, each
 * seeing only its own tenant's changes: every transition of every job, made by any node
 * sharing the store, in feed order. Each event's `id` is its feed cursor, so a client that
 * reconnects with `Last-Event-ID` (or `?after=`) gets exactly what it missed, no gap and no
 * repeat, for as long as the feed keeps it (`changeRetentionMs`); a cursor older than that
 * answers 410 as `GET /v1/changes` does, and a stream that falls behind retention gets
 * `event: reset`. Streams are capped per key and in total (`admit`), and the keys of open
 * streams are checked again every `recheckMs`, so revoking a key ends its streams.
 */
export class EventStream {
  private readonly clients = new Set<Client>();
  private readonly perOwner = new Map<string, number>();
  private readonly followers: FeedFollowers;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly poll: NodeJS.Timeout;
  private readonly recheck: NodeJS.Timeout | null;
  private checking = false;
  private readonly listener = (c: { tenant: string }) => void this.followers.wake(c.tenant);
  private readonly opts: Required<EventStreamOptions>;

  constructor(
    private readonly scheduler: Scheduler,
    options: EventStreamOptions = {},
    private readonly ownersValid?: StreamOwnersCheck,
  ) {
    this.opts = Object.freeze({
      heartbeatMs: options.heartbeatMs ?? 15_000,
      pollMs: options.pollMs ?? 1000,
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
    this.followers = new FeedFollowers(
      (tenant, after, limit) => scheduler.changes({ tenant, after, limit }),
      PAGE,
    );
    // This node's changes wake their tenant's streams at once; the poll finds the others'.
    scheduler.on("changed", this.listener);
    this.heartbeat = setInterval(() => this.beat(), this.opts.heartbeatMs);
    this.heartbeat.unref();
    this.poll = setInterval(() => void this.followers.wakeAll(), this.opts.pollMs);
    this.poll.unref();
    this.recheck = ownersValid
      ? setInterval(() => void this.checkOwners(), this.opts.recheckMs)
      : null;
    this.recheck?.unref();
  }

  /** Number of connected clients (streams being opened included). */
  get size(): number {
    return this.clients.size;
  }

  /**
   * Null when one more stream of `owner` may open now, else the refusal to answer: 429 past
   * the per-key cap, 503 past the server's. Call it right before `open` (no await between:
   * the count it checks is the one `open` adds to).
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
   * Opens a stream of `owner` (admitted by `admit`; its slot is taken at once) for `tenant`,
   * starting after the cursor `after` (from `Last-Event-ID` or `?after=`, named by `field`
   * in errors) or at the feed's head. Resolves to the function that starts streaming to a
   * response whose headers are not yet sent, or to the answer to send instead: 410 for a
   * cursor older than what the feed keeps, 503 when the store cannot be read. A malformed
   * cursor, or one past the feed's head, throws InvalidJobError (400).
   */
  async open(
    tenant: string,
    owner: string,
    after?: { cursor: string; field: string },
  ): Promise<Answer | ((res: ServerResponse) => void)> {
    const client = this.reserve(tenant, owner);
    try {
      client.cursor = after
        ? await this.resumable(tenant, after.cursor, after.field)
        : await this.scheduler.changesHead({ tenant });
    } catch (err) {
      this.drop(client);
      if (err instanceof ChangeCursorExpiredError) {
        const r = cursorExpired(err);
        return { ...errorAnswer(r.status, r.code, r, r.extra), headers: r.headers };
      }
      if (err instanceof DuetimeError) throw err;
      return full(503, "unavailable", {
        field: "events",
        expected: "a readable change feed",
        received: new Described("the store could not be read"),
        message: "the change feed cannot be read now: retry later",
      });
    }
    return (res) => this.attach(client, res);
  }

  /** Ends every stream and stops listening (server shutdown). */
  close(): void {
    clearInterval(this.heartbeat);
    clearInterval(this.poll);
    if (this.recheck) clearInterval(this.recheck);
    this.scheduler.off("changed", this.listener);
    for (const c of this.clients) {
      c.res?.end();
      this.followers.remove(c);
    }
    this.clients.clear();
    this.perOwner.clear();
  }

  /** Reads the feed for every open stream now (what the `pollMs` timer runs). */
  pollNow(): Promise<void> {
    return this.followers.wakeAll();
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
        c.res?.end(frame("revoked", REVOKED));
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

  private reserve(tenant: string, owner: string): Client {
    const client: Client = {
      tenant,
      owner,
      cursor: "",
      res: null,
      ready: () => client.res !== null && !client.res.writableNeedDrain,
      deliver: (change) => this.send(client, change),
      expired: (err) => {
        client.res?.write(
          frame("reset", {
            reason:
              "changes were removed by retention before this stream read them; reload the view",
            oldest: err.oldest,
          }),
        );
      },
    };
    this.clients.add(client);
    this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);
    return client;
  }

  private attach(client: Client, res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": EVENT_STREAM_TYPE,
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // nginx buffers responses by default, which would hold events back.
      "x-accel-buffering": "no",
    });
    res.write(`retry: ${this.opts.retryMs}\n`);
    // The hello carries the start cursor as its id, so a reconnect resumes from here even
    // if no change came meanwhile.
    const hello = { tenant: client.tenant, now: this.scheduler.now(), cursor: client.cursor };
    res.write(frame("hello", hello, client.cursor));
    // Its key was revoked while the stream was being opened.
    if (!this.clients.has(client)) {
      res.end(frame("revoked", REVOKED));
      return;
    }
    client.res = res;
    res.on("close", () => this.drop(client));
    res.on("drain", () => void this.followers.wake(client.tenant));
    this.followers.add(client);
  }

  /** `text` as a cursor this tenant's stream may resume after, checked against the feed. */
  private async resumable(tenant: string, text: string, field: string): Promise<string> {
    parseResumeCursor(text, field, await this.scheduler.changesHead({ tenant }));
    // Throws ChangeCursorExpiredError when retention removed changes after it.
    await this.scheduler.changes({ tenant, after: text, limit: 1 });
    return text;
  }

  private drop(c: Client): void {
    if (!this.clients.delete(c)) return;
    this.followers.remove(c);
    const left = (this.perOwner.get(c.owner) ?? 1) - 1;
    if (left > 0) this.perOwner.set(c.owner, left);
    else this.perOwner.delete(c.owner);
  }

  private send(c: Client, change: StoredChange): void {
    if (!c.res) return;
    if (c.res.writableLength > MAX_BUFFERED_BYTES) {
      this.drop(c);
      c.res.end();
      return;
    }
    c.res.write(frame("job", change, change.cursor));
  }

  private beat(): void {
    const line = `: heartbeat ${this.scheduler.now()}\n\n`;
    for (const c of this.clients) c.res?.write(line);
  }
}

function full(status: number, code: string, e: Parameters<typeof errorAnswer>[2]): Answer {
  const a = errorAnswer(status, code, e);
  return { ...a, headers: { "retry-after": String(FULL_RETRY_AFTER_S) } };
}

function frame(event: string, data: unknown, id?: string): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
