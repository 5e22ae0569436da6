import type pg from "pg";
import { systemClock, type Clock } from "../../core/clock.js";
import { quietLogger, type Logger } from "../../core/logger.js";
import { ServiceLoop, type LoopGroup } from "../../core/loop.js";

/** The loop a subscriber runs the LISTEN connection on (a Scheduler passes its own). */
export interface ListenLoopDeps {
  /** The reconnect backoff's timers. Default: the system clock. */
  readonly clock?: Clock;
  /** Where failed connection attempts are logged (besides the store's onError). Default: nowhere. */
  readonly logger?: Logger;
  /** The subscriber's loops, which the reconnect loop joins (see LoopGroup). */
  readonly loops?: LoopGroup;
}

/** The payload that says the node registry changed (statements.ts: nodesChanged). */
export const NODES_CHANGED = "nodes";
/** The payload that says a pause was made (pause-statements.ts: insert). */
export const PAUSES_CHANGED = "pauses";

/** Backoff between reconnect attempts, ms: 100-200 after the first failure, up to 2.5-5 s. */
const RECONNECT_BACKOFF_MS = { min: 200, max: 5000 };

/**
 * LISTEN/NOTIFY wake-ups: a write that may be due earlier than a sleeping node knows
 * notifies the channel with the earliest due time; every listening node hears it.
 *
 * One dedicated connection per store listens (a pooled connection cannot, since LISTEN is
 * per session). It is opened when the first listener subscribes, by a ServiceLoop whose
 * pass is one connection attempt: a lost connection wakes it at once, a failed attempt is
 * logged and retried with the loop's growing backoff on the subscriber's clock. After a
 * reconnect listeners are called with 0 ("something may already be due"), since
 * notifications sent while disconnected are lost.
 */
export class DueNotifier {
  private readonly listeners = new Set<(dueAt: number) => void>();
  private readonly nodeListeners = new Set<() => void>();
  private readonly pauseListeners = new Set<() => void>();
  private client: pg.Client | null = null;
  private loop: ServiceLoop | null = null;
  /** The connection attempt under way, if any (ready() waits for it). */
  private connecting: Promise<void> | null = null;
  private connectedOnce = false;
  private closed = false;
  /** Earliest due time this process has heard of or read (null: unknown). */
  private known: number | null = null;

  constructor(
    /** Opens the LISTEN connection's client (it follows a failover like the pool's). */
    private readonly newClient: () => pg.Client,
    private readonly sql: { readonly notifyChannel: string; readonly listen: string },
    private readonly onError: (error: Error) => void,
  ) {}

  get channel(): string {
    return this.sql.notifyChannel;
  }

  subscribe(listener: (dueAt: number) => void, deps: ListenLoopDeps = {}): () => void {
    this.listeners.add(listener);
    this.listen(deps);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Calls `listener` when a node joined, left, was taken over or moved shards (payload
   * "nodes", see shard-leases.ts), and after a reconnect (notifications may have been
   * missed meanwhile).
   */
  subscribeNodes(listener: () => void, deps: ListenLoopDeps = {}): () => void {
    this.nodeListeners.add(listener);
    this.listen(deps);
    return () => {
      this.nodeListeners.delete(listener);
    };
  }

  /**
   * Calls `listener` when a pause was made through any process (payload "pauses", see
   * pauses.ts), and after a reconnect.
   */
  subscribePauses(listener: () => void, deps: ListenLoopDeps = {}): () => void {
    this.pauseListeners.add(listener);
    this.listen(deps);
    return () => {
      this.pauseListeners.delete(listener);
    };
  }

  /** Opens the LISTEN connection if no subscriber has yet. */
  private listen(deps: ListenLoopDeps): void {
    if (!this.loop && !this.closed) {
      this.loop = new ServiceLoop({
        name: "listen-connection",
        clock: deps.clock ?? systemClock(),
        logger: deps.logger ?? quietLogger,
        errorBackoffMs: RECONNECT_BACKOFF_MS,
        group: deps.loops,
        pass: () => this.connectOnce(),
      });
      // Sleeps between passes until the connection is lost; the first attempt runs now.
      this.loop.start(null);
      void this.loop.runNow();
    }
  }

  /** Records what the watcher read, so writes notify only when they beat it. */
  observe(earliestDue: number | null): void {
    this.known = earliestDue;
  }

  /**
   * Whether a write whose earliest job is due at `dueAt` should notify: it is due within
   * `withinMs` of `now` (later jobs are found by the nodes' idle wake-up anyway) and it is
   * earlier than the earliest due time this process knows of (a stale one, in the past, is
   * unknown). Records `dueAt` when it says yes, so a burst of writes notifies once.
   */
  shouldNotify(dueAt: number, now: number, withinMs: number): boolean {
    if (dueAt > now + withinMs) return false;
    const known = this.known !== null && this.known > now ? this.known : null;
    if (known !== null && dueAt >= known) return false;
    this.known = dueAt;
    return true;
  }

  /** One connection attempt (the loop's pass): resolves null, to sleep until it is lost. */
  private connectOnce(): Promise<null> {
    const attempt = this.open().finally(() => {
      this.connecting = null;
    });
    this.connecting = attempt.then(
      () => undefined,
      () => undefined,
    );
    return attempt.then(() => null);
  }

  private async open(): Promise<void> {
    const client = this.newClient();
    const lost = (err: Error) => {
      if (this.client === client) this.client = null;
      client.removeAllListeners("notification");
      client.end().catch(() => {});
      if (this.closed) return;
      this.onError(new Error(`LISTEN connection on ${this.channel}`, { cause: err }));
      void this.loop?.runNow();
    };
    // Errors while connecting are the attempt's; after that, a loss of the connection.
    client.on("error", (err) => {
      if (this.client === client) lost(err);
    });
    client.on("notification", (msg) => {
      if (msg.payload === NODES_CHANGED) return this.emitTo(this.nodeListeners);
      if (msg.payload === PAUSES_CHANGED) return this.emitTo(this.pauseListeners);
      const due = Number(msg.payload);
      if (!Number.isFinite(due)) return;
      if (this.known === null || due < this.known) this.known = due;
      this.emit(due);
    });
    try {
      await client.connect();
      await client.query(this.sql.listen);
    } catch (err) {
      client.removeAllListeners("notification");
      client.end().catch(() => {});
      const wrapped = new Error(`LISTEN connection on ${this.channel}`, { cause: err });
      if (!this.closed) this.onError(wrapped);
      throw wrapped;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    client.on("end", () => {
      if (this.client === client) lost(new Error("connection ended"));
    });
    if (this.connectedOnce) {
      this.emit(0);
      this.emitTo(this.nodeListeners);
      this.emitTo(this.pauseListeners);
    }
    this.connectedOnce = true;
  }

  private emitTo(listeners: ReadonlySet<() => void>): void {
    for (const l of listeners) {
      try {
        l();
      } catch (err) {
        this.onError(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  private emit(due: number): void {
    for (const l of this.listeners) {
      try {
        l(due);
      } catch (err) {
        this.onError(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  /** Resolves once the connection attempt under way (if any) has ended (for tests). */
  async ready(): Promise<void> {
    while (this.connecting) await this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.loop?.stop();
    const c = this.client;
    this.client = null;
    if (c) await c.end().catch(() => {});
    this.listeners.clear();
    this.nodeListeners.clear();
    this.pauseListeners.clear();
  }
}
