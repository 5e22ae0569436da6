import pg from "pg";
import type { PostgresHost } from "./url.js";

/** How long a probe waits for a host that does not answer, when the URL gives no connect_timeout. */
const DEFAULT_PROBE_TIMEOUT_MS = 5000;

/**
 * Picks the host to connect to among several, as libpq does for a multi-host connection
 * string: hosts are tried in order and the first that qualifies is kept ("read-write": one
 * whose `transaction_read_only` is off, so never a standby). The choice is remembered until
 * a connection to it fails; then the next connection looks again, in order, so after a
 * failover every new connection (the pool's and the LISTEN one) finds the promoted standby.
 *
 * A probe is a connection of its own (node-postgres cannot reuse a client whose connect
 * failed), closed at once; it costs one connection per failover, not per query.
 */
export class HostLocator {
  private chosen: Promise<PostgresHost> | null = null;

  constructor(
    readonly hosts: readonly PostgresHost[],
    private readonly needWritable: boolean,
    private readonly configFor: (host: PostgresHost) => pg.ClientConfig,
    private readonly probeTimeoutMs: number = DEFAULT_PROBE_TIMEOUT_MS,
  ) {}

  /** The host new connections go to (looked for when none is remembered). */
  host(): Promise<PostgresHost> {
    if (this.chosen === null) {
      const looking = this.look();
      this.chosen = looking;
      // A failed look is not remembered: the next connection looks again.
      looking.catch(() => {
        if (this.chosen === looking) this.chosen = null;
      });
    }
    return this.chosen;
  }

  /** A connection to `host` failed: the next connection looks again. */
  forget(host: PostgresHost): void {
    const current = this.chosen;
    if (current === null) return;
    void current.then(
      (h) => {
        if (h === host && this.chosen === current) this.chosen = null;
      },
      () => undefined,
    );
  }

  private async look(): Promise<PostgresHost> {
    const refusals: string[] = [];
    for (const host of this.hosts) {
      const why = await this.probe(host);
      if (why === null) return host;
      refusals.push(`${host.host}:${host.port} ${why}`);
    }
    const wanted = this.needWritable ? "writable PostgreSQL host" : "PostgreSQL host reachable";
    throw new Error(`no ${wanted} (target_session_attrs): ${refusals.join("; ")}`);
  }

  /** Null when `host` qualifies, else why not. */
  private async probe(host: PostgresHost): Promise<string | null> {
    const client = new pg.Client({
      ...this.configFor(host),
      connectionTimeoutMillis: this.probeTimeoutMs,
    });
    client.on("error", () => undefined);
    try {
      await client.connect();
      if (!this.needWritable) return null;
      const { rows } = await client.query<{ transaction_read_only: string }>(
        "SHOW transaction_read_only",
      );
      return rows[0]?.transaction_read_only === "off" ? null : "is read-only (a standby)";
    } catch (err) {
      return `refused: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/**
 * A node-postgres Client class whose connections go where `locator` says. The pool creates
 * its clients with it, and the LISTEN connection is one, so both follow a failover. A
 * client whose connection fails (or later drops) makes the locator look again.
 */
export function locatingClient(locator: HostLocator): typeof pg.Client {
  return class LocatingClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error | null, c?: pg.Client) => void): void;
    override connect(
      callback?: (err: Error | null, c?: pg.Client) => void,
    ): Promise<pg.Client> | void {
      const connected = this.connectLocated();
      if (!callback) return connected;
      connected.then(
        (c) => callback(null, c),
        (err: Error) => callback(err),
      );
    }

    private async connectLocated(): Promise<pg.Client> {
      const host = await locator.host();
      // node-postgres reads host and port when it opens the socket, not before.
      const self = this as unknown as {
        host: string;
        port: number;
        connectionParameters: { host: string; port: number };
      };
      self.host = self.connectionParameters.host = host.host;
      self.port = self.connectionParameters.port = host.port;
      this.once("error", () => locator.forget(host));
      try {
        return await super.connect();
      } catch (err) {
        locator.forget(host);
        throw err;
      }
    }
  };
}
