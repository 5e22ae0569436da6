import type pg from "pg";

/**
 * LISTEN/NOTIFY wake-ups: a write that may be due earlier than a sleeping node knows
 * notifies the channel with the earliest due time; every listening node hears it.
 *
 * One dedicated connection per store listens (a pooled connection cannot, since LISTEN is
 * per session). It is opened when the first listener subscribes and reconnects with a
 * growing backoff after an error; after a reconnect listeners are called with 0 ("something
 * may already be due"), since notifications sent while disconnected are lost.
 */
export class DueNotifier {
  private readonly listeners = new Set<(dueAt: number) => void>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private backoffMs = 100;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Earliest due time this process has heard of or read (null: unknown). */
  private known: number | null = null;

  constructor(
    /** Opens the LISTEN connection's client (it follows a failover like the pool's). */
    private readonly newClient: () => pg.Client,
    readonly channel: string,
    private readonly onError: (error: Error) => void,
  ) {}

  subscribe(listener: (dueAt: number) => void): () => void {
    this.listeners.add(listener);
    if (!this.client && !this.connecting && !this.closed) this.connect(false);
    return () => {
      this.listeners.delete(listener);
    };
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

  private connect(reconnected: boolean): void {
    const client = this.newClient();
    const fail = (err: Error) => {
      if (this.client === client) this.client = null;
      client.removeAllListeners("notification");
      client.end().catch(() => {});
      if (this.closed) return;
      this.onError(new Error(`LISTEN connection on ${this.channel}`, { cause: err }));
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (!this.closed) this.connect(true);
      }, this.backoffMs);
      this.retryTimer.unref();
      this.backoffMs = Math.min(this.backoffMs * 2, 5000);
    };
    client.on("error", fail);
    client.on("notification", (msg) => {
      const due = Number(msg.payload);
      if (!Number.isFinite(due)) return;
      if (this.known === null || due < this.known) this.known = due;
      this.emit(due);
    });
    this.connecting = (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN "${this.channel}"`);
        if (this.closed) {
          await client.end();
          return;
        }
        this.client = client;
        this.backoffMs = 100;
        client.on("end", () => {
          if (this.client === client && !this.closed) fail(new Error("connection ended"));
        });
        if (reconnected) this.emit(0);
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)));
      } finally {
        this.connecting = null;
      }
    })();
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

  /** Resolves once the LISTEN connection is established (for tests). */
  async ready(): Promise<void> {
    while (this.connecting) await this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.connecting;
    const c = this.client;
    this.client = null;
    if (c) await c.end().catch(() => {});
    this.listeners.clear();
  }
}
