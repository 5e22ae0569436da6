import type pg from "pg";
import type { Clock } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import { ServiceLoop, type LoopGroup } from "../../core/loop.js";
import type { Statements } from "./statements.js";

/** A node as its peers know it: its id and the incarnation its liveness lock names. */
export interface NodeIncarnation {
  readonly nodeId: string;
  /** When this incarnation started (epoch ms, made unique among the node's locks). */
  readonly startedAt: number;
}

/** What a NodeLiveness needs. */
export interface NodeLivenessDeps {
  /** Opens a session connection (the store's session URL: a pooler cannot hold a lock). */
  readonly newClient: () => pg.Client;
  readonly sql: Pick<
    Statements,
    "livenessHold" | "livenessTry" | "livenessWait" | "livenessCheckInterval"
  >;
  /** Names the schema in the lock keys, so two schemas' nodes never share a lock. */
  readonly schema: string;
  readonly nodeId: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The node's loops that recover together (see LoopGroup). Default: none. */
  readonly loops?: LoopGroup | undefined;
  /** The lock is held (again): this incarnation may register. */
  readonly onHeld: () => void;
  /** The lock's connection was lost: peers may be taking this node over. */
  readonly onLost: () => void;
  /** A watched peer's lock was released: that incarnation is gone (dead or stopped). */
  readonly onPeerGone: (peer: NodeIncarnation) => Promise<void>;
}

/** Reconnect backoff of the lock connections, ms. */
const BACKOFF_MS = { min: 200, max: 5000 };

/**
 * Dead-node detection without polling. Each node holds a session-level advisory lock
 * named for its incarnation on a connection of its own that sends nothing while idle; each
 * node waits, on one more idle connection per peer, for a shared lock on every peer's key.
 * A waiting `pg_advisory_lock_shared` costs no transaction and no statement until it
 * returns, which happens the moment the peer's session ends: a killed process's socket is
 * closed by its kernel, the server ends the backend and its locks with it. The waiters of
 * the peers that are still there learn nothing and cost nothing.
 *
 * Only a lock released while watched is a death. A lock already free when first looked at
 * (`pg_try_advisory_lock_shared` succeeds) proves nothing: after a failover every lock is
 * gone from the new server while the registry still names the old incarnations and their
 * nodes are re-taking new locks. Such an incarnation is not watched again; the heartbeat
 * ttl decides, and a re-registered node (a new incarnation) is watched anew.
 * The lock proves only that a session is gone: the peer's shard-lease rows stay the truth
 * (fenced as before), and a takeover is conditional on the incarnation the lock named, so
 * a restarted node with the same id (a new incarnation, its own lock) is never taken over
 * by a stale waiter. Waiting backends check their client every second
 * (client_connection_check_interval, PostgreSQL 14+), so a waiter this node abandons does
 * not linger on the server.
 */
export class NodeLiveness {
  private readonly holder: ServiceLoop;
  private holderClient: pg.Client | null = null;
  private held: number | null = null;
  private readonly waiters = new Map<string, PeerWaiter>();
  /** Incarnations whose lock was free when first waited for (left to the ttl). */
  private readonly unclear = new Set<string>();
  private stopped = false;
  private readonly lockSpace: string;

  constructor(private readonly d: NodeLivenessDeps) {
    this.lockSpace = `duetime:node:${d.schema}`;
    this.holder = new ServiceLoop({
      name: "node-liveness",
      clock: d.clock,
      logger: d.logger,
      errorBackoffMs: BACKOFF_MS,
      group: d.loops,
      pass: () => this.hold(),
    });
  }

  /**
   * This incarnation's start time while its lock is held, else null: the node registers
   * (heartbeats) only while its peers can watch it.
   */
  get incarnation(): number | null {
    return this.held;
  }

  /** Takes the lock; resolves once the first attempt ended (failures are retried). */
  start(): Promise<void> {
    this.holder.start(null);
    return this.holder.runNow();
  }

  /** Watches exactly these peers (the live nodes of the last heartbeat, this one left out). */
  watch(peers: readonly NodeIncarnation[]): void {
    if (this.stopped) return;
    const wanted = new Map(peers.map((p) => [keyOf(p), p]));
    for (const [key, w] of this.waiters) {
      if (!wanted.has(key)) {
        this.waiters.delete(key);
        void w.stop();
      }
    }
    for (const key of this.unclear) if (!wanted.has(key)) this.unclear.delete(key);
    for (const [key, peer] of wanted) {
      if (this.waiters.has(key) || this.unclear.has(key)) continue;
      const w = new PeerWaiter(peer, this.lockSpace, this.d, (outcome) => {
        if (this.waiters.get(key) === w) this.waiters.delete(key);
        if (outcome === "unclear") this.unclear.add(key);
      });
      this.waiters.set(key, w);
      w.start();
    }
  }

  /** Releases the lock (peers learn at once) and stops watching. */
  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.holderClient;
    this.holderClient = null;
    this.held = null;
    await this.holder.stop();
    await Promise.all([...this.waiters.values()].map((w) => w.stop()));
    this.waiters.clear();
    await client?.end().catch(() => undefined);
  }

  /** The holder loop's pass: connect and lock; sleeps (null) until the connection is lost. */
  private async hold(): Promise<null> {
    if (this.stopped || this.holderClient) return null;
    const client = this.d.newClient();
    client.on("error", () => undefined);
    try {
      await client.connect();
      let startedAt = this.d.clock.now();
      // Another session holding this key is a hash collision or an incarnation started in
      // the same millisecond: the next millisecond names a new incarnation.
      for (;;) {
        const r = await client.query<{ locked: boolean }>(this.d.sql.livenessHold, [
          this.lockSpace,
          lockName(this.d.nodeId, startedAt),
        ]);
        if (r.rows[0]?.locked) break;
        startedAt++;
      }
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return null;
      }
      this.holderClient = client;
      this.held = startedAt;
      client.once("end", () => this.lost(client));
      client.on("error", () => this.lost(client));
    } catch (err) {
      await client.end().catch(() => undefined);
      throw new Error(`taking the liveness lock of node ${this.d.nodeId}`, { cause: err });
    }
    this.d.onHeld();
    return null;
  }

  private lost(client: pg.Client): void {
    if (this.holderClient !== client) return;
    this.holderClient = null;
    this.held = null;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.d.logger.error(
      { nodeId: this.d.nodeId },
      "liveness lock connection lost; peers may take this node's shards over",
    );
    this.d.onLost();
    void this.holder.runNow();
  }
}

/**
 * Waits on one peer's lock, on a connection of its own, until the lock is granted (the
 * peer's session is gone) or the waiter is stopped. A lost connection proves nothing: it
 * is reopened with backoff.
 */
class PeerWaiter {
  private readonly loop: ServiceLoop;
  private client: pg.Client | null = null;
  private stopped = false;

  constructor(
    private readonly peer: NodeIncarnation,
    private readonly lockSpace: string,
    private readonly d: NodeLivenessDeps,
    private readonly done: (outcome: "gone" | "unclear") => void,
  ) {
    this.loop = new ServiceLoop({
      name: "node-liveness-watch",
      clock: d.clock,
      logger: d.logger,
      errorBackoffMs: BACKOFF_MS,
      group: d.loops,
      pass: () => this.wait(),
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // A query in flight makes end() close the socket at once (pg), failing the wait.
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
    await this.loop.stop();
  }

  private async wait(): Promise<null> {
    if (this.stopped) return null;
    const client = this.d.newClient();
    client.on("error", () => undefined);
    this.client = client;
    let freeAtOnce = false;
    try {
      await client.connect();
      await client.query(this.d.sql.livenessCheckInterval).catch(() => undefined); // < 14
      if (this.stopped) return null;
      const key = [this.lockSpace, lockName(this.peer.nodeId, this.peer.startedAt)];
      // Free already: proves nothing (see the class comment). Held: wait for its release.
      const free = await client.query<{ free: boolean }>(this.d.sql.livenessTry, key);
      freeAtOnce = free.rows[0]?.free === true;
      if (!freeAtOnce) await client.query(this.d.sql.livenessWait, key);
    } catch (err) {
      if (this.stopped) return null;
      throw new Error(`watching node ${this.peer.nodeId}`, { cause: err });
    } finally {
      if (this.client === client) this.client = null;
      // Ending the session releases the shared lock: a restart of the peer can take its own.
      if (!this.stopped) void client.end().catch(() => undefined);
    }
    if (this.stopped) return null;
    if (freeAtOnce) {
      this.stopped = true;
      this.d.logger.debug(
        { peer: this.peer.nodeId },
        "a peer's liveness lock was free when first looked at: left to its heartbeat ttl",
      );
      this.done("unclear");
      return null;
    }
    this.d.logger.debug({ peer: this.peer.nodeId }, "node gone (its liveness lock was released)");
    // A failed takeover fails the pass: the retry finds the lock free again and retries it.
    await this.d.onPeerGone(this.peer);
    this.stopped = true;
    this.done("gone");
    return null;
  }
}

function keyOf(p: NodeIncarnation): string {
  return `${p.nodeId}\n${p.startedAt}`;
}

/** The second half of a lock key: the node and its incarnation. */
function lockName(nodeId: string, startedAt: number): string {
  return `${nodeId}@${startedAt}`;
}
