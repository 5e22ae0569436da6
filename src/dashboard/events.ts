import type { ServerResponse } from "node:http";
import type { JobChange, Scheduler } from "../api/scheduler.js";
import { InvalidOptionError } from "../core/errors.js";

/** Options of the live stream. */
export interface EventStreamOptions {
  /** Interval of the heartbeat comment that keeps proxies from closing an idle stream, in ms. Default 15000. */
  readonly heartbeatMs?: number;
  /** Recent changes kept for clients that reconnect with `Last-Event-ID`. Default 10000. */
  readonly replay?: number;
  /** Reconnect delay suggested to EventSource clients (the `retry:` field), in ms. Default 3000. */
  readonly retryMs?: number;
}

interface Client {
  readonly tenant: string;
  readonly res: ServerResponse;
}

interface Numbered {
  readonly seq: number;
  readonly change: JobChange;
}

/** A client that has this much unsent data is too slow and is dropped (it may reconnect). */
const MAX_BUFFERED_BYTES = 1 << 20;

/**
 * Fans the scheduler's `changed` feed out to Server-Sent Events clients, each seeing only
 * its own tenant's changes. Every change gets a sequence number (the SSE `id`), and the last
 * `replay` changes are kept so a client that reconnects with `Last-Event-ID` misses nothing;
 * when the gap is older than that, it is told to `reset` (reload its view) instead.
 *
 * The feed is this process's changes: with several service nodes on one database, a client
 * sees the changes made through the node it is connected to.
 */
export class EventStream {
  private readonly clients = new Set<Client>();
  /** Ring of the last `replay` changes: change number `seq` sits at `seq % replay`. */
  private readonly recent: (Numbered | undefined)[];
  private seq = 0;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly listener = (c: JobChange) => this.publish(c);
  private readonly opts: Required<EventStreamOptions>;

  constructor(
    private readonly scheduler: Scheduler,
    options: EventStreamOptions = {},
  ) {
    this.opts = Object.freeze({
      heartbeatMs: options.heartbeatMs ?? 15_000,
      replay: options.replay ?? 10_000,
      retryMs: options.retryMs ?? 3_000,
    });
    for (const [name, value] of Object.entries(this.opts)) {
      if (!Number.isInteger(value) || value < 1) {
        throw new InvalidOptionError(`events.${name}`, "a positive integer", value);
      }
    }
    this.recent = new Array<Numbered | undefined>(this.opts.replay);
    scheduler.on("changed", this.listener);
    this.heartbeat = setInterval(() => this.beat(), this.opts.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Number of connected clients. */
  get size(): number {
    return this.clients.size;
  }

  /** Starts streaming to `res` (headers not yet sent); resumes after `lastEventId` if given. */
  attach(res: ServerResponse, tenant: string, lastEventId: string | undefined): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // nginx buffers responses by default, which would hold events back.
      "x-accel-buffering": "no",
    });
    res.write(`retry: ${this.opts.retryMs}\n`);
    res.write(frame("hello", { tenant, now: this.scheduler.options.clock.now(), seq: this.seq }));
    const client: Client = { tenant, res };
    this.clients.add(client);
    res.on("close", () => this.clients.delete(client));
    if (lastEventId !== undefined) this.replayAfter(client, lastEventId);
  }

  /** Ends every stream and stops listening (server shutdown). */
  close(): void {
    clearInterval(this.heartbeat);
    this.scheduler.off("changed", this.listener);
    for (const c of this.clients) c.res.end();
    this.clients.clear();
  }

  private publish(change: JobChange): void {
    const n: Numbered = { seq: ++this.seq, change };
    this.recent[n.seq % this.opts.replay] = n;
    for (const c of this.clients) if (c.tenant === change.tenant) this.send(c, n);
  }

  private replayAfter(client: Client, lastEventId: string): void {
    const last = /^\d+$/.test(lastEventId) ? Number(lastEventId) : NaN;
    const oldest = Math.max(1, this.seq - this.opts.replay + 1);
    // A gap older than what is kept (or an id from before a restart) cannot be filled.
    if (!Number.isSafeInteger(last) || last > this.seq || last < oldest - 1) {
      client.res.write(frame("reset", { reason: "missed changes; reload the view" }));
      return;
    }
    for (let seq = last + 1; seq <= this.seq; seq++) {
      const n = this.recent[seq % this.opts.replay];
      if (n && n.change.tenant === client.tenant) this.send(client, n);
    }
  }

  private send(c: Client, n: Numbered): void {
    if (c.res.writableLength > MAX_BUFFERED_BYTES) {
      this.clients.delete(c);
      c.res.end();
      return;
    }
    c.res.write(frame("job", n.change, n.seq));
  }

  private beat(): void {
    const line = `: heartbeat ${this.scheduler.options.clock.now()}\n\n`;
    for (const c of this.clients) c.res.write(line);
  }
}

function frame(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
