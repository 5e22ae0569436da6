import { systemClock, type Clock } from "../../core/clock.js";
import { InvalidOptionError } from "../../core/errors.js";
import { quietLogger, type Logger } from "../../core/logger.js";
import type { LoopGroup } from "../../core/loop.js";
import { PeriodicTask } from "../../core/periodic-task.js";
import type { PostgresContext } from "./context.js";
import { NodeLiveness, type NodeIncarnation } from "./node-liveness.js";

/** Pause between heartbeats when none is given, ms (see ShardLeasesOptions.heartbeatMs). */
export const DEFAULT_SHARD_HEARTBEAT_MS = 30_000;

/** Options of a node's shard leases. */
export interface ShardLeasesOptions {
  /** This node's id, unique among the nodes sharing the schema. Required. */
  readonly nodeId: string;
  /**
   * Pause between heartbeats in ms (each waits 0.9 to 1.1 of it). Default 30,000: two
   * short statements a minute per node. A dead node is not found by its missed heartbeats
   * but at once, by its liveness lock (see `detectDeadNodes`); the heartbeats keep the
   * registry and the leases, which stay the truth, for what a lock cannot tell (a node cut
   * off from the database while its session lingers on the server).
   */
  readonly heartbeatMs?: number;
  /**
   * How long a node (and its shard leases) stays alive without a heartbeat, in ms: a node
   * whose session lingers but which stopped heartbeating has its shards adopted this long
   * after its last heartbeat, on the other nodes' next one. Default 3 heartbeats.
   */
  readonly ttlMs?: number;
  /**
   * Whether `start()` takes this node's liveness lock and watches its peers' (a session
   * connection each, node-liveness.ts), so a node whose process dies has its shards taken
   * over and its claims' leases ended at once by the others, and joins and leaves are
   * announced (NOTIFY) so the others heartbeat at once. Default true. Without it, a dead
   * node is found only once its ttl runs out.
   */
  readonly detectDeadNodes?: boolean;
  /**
   * Called when a dead peer was taken over and its claims' leases ended (the engine's
   * lease sweeper then puts them back at once).
   */
  readonly onPeerLost?: () => void;
  /**
   * The clock: lease times are its `now()` (nodes' clocks must agree to well within
   * ttlMs - heartbeatMs) and heartbeats are its timers. A Scheduler passes its own.
   * Default: the system clock.
   */
  readonly clock?: Clock;
  /** Where failed heartbeats are logged (the loop carries on). Default: nowhere. */
  readonly logger?: Logger;
  /** Called with the new set of owned shards whenever it changes. */
  readonly onChange?: (shards: readonly number[]) => void;
  /**
   * The node's loops that recover together (see LoopGroup): retried every heartbeat, the
   * heartbeat is often the first to find the database back. Default: none.
   */
  readonly loops?: LoopGroup;
}

/** What one heartbeat did. */
export interface HeartbeatResult {
  /** Shards this node owns now, ascending. */
  readonly owned: readonly number[];
  /** Shards newly acquired by this heartbeat. */
  readonly acquired: readonly number[];
  /** Shards handed back because another node should own them now. */
  readonly released: readonly number[];
  /** Live nodes (this one included), by id. */
  readonly nodes: readonly string[];
  /** The other live nodes with their incarnations (the liveness locks watched). */
  readonly peers: readonly NodeIncarnation[];
}

/**
 * Node registry and shard ownership by lease. Every heartbeat:
 *  1. records this node as alive until now + ttl and forgets nodes whose ttl ran out;
 *  2. computes the same balanced assignment every node computes from the live node list
 *     (rendezvous hashing with a capacity of ceil(shards / nodes), so a join or a leave
 *     moves few shards);
 *  3. releases owned shards assigned elsewhere, then renews its leases and takes assigned
 *     shards that are free or whose lease ran out (a dead node's, after ttl).
 * A shard changes hands only through a release or an expired lease, so two nodes never
 * both believe they own it while their clocks agree; if they briefly did, claims stay
 * safe anyway (SKIP LOCKED and fencing tokens): shards split work, they do not guard it.
 *
 * Rebalancing is bounded: a joining node gets its shards within two heartbeats (the
 * owners release on their next heartbeat, it takes them on its next), at once when the
 * nodes detect dead peers (a join and a release NOTIFY the others, who heartbeat at once);
 * a node stopping cleanly releases at once. A dead node's shards are adopted within ttl +
 * one heartbeat, or at once with `detectDeadNodes` (its liveness lock is released when its
 * process dies; see node-liveness.ts and takeOver).
 * The heartbeats are a PeriodicTask on the given clock. Pass `() => leases.owned()` as the
 * engine's `shards` option (a Scheduler on PostgreSQL does this itself: see node.ts).
 */
export class ShardLeases extends PeriodicTask<HeartbeatResult> {
  private readonly heartbeatMs: number;
  private readonly ttlMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private current: readonly number[] = [];
  private validUntil = 0;
  /** Incarnation used when no liveness lock names one (detectDeadNodes off). */
  private readonly startedAt: number;
  private liveness: NodeLiveness | null = null;
  private unsubscribe: (() => void) | null = null;
  /** Whether this start's first registration was announced to the other nodes. */
  private announced = false;

  constructor(
    private readonly ctx: Pick<
      PostgresContext,
      "pool" | "sql" | "shardCount" | "schema" | "sessionClient" | "notifier"
    >,
    private readonly options: ShardLeasesOptions,
  ) {
    const { heartbeatMs, ttlMs } = resolveTiming(options);
    const clock = options.clock ?? systemClock();
    const logger = options.logger ?? quietLogger;
    super({
      name: "shard-leases",
      clock,
      logger,
      intervalMs: heartbeatMs,
      jitter: 0.1,
      // A failed heartbeat is retried at heartbeat pace, not slower: the leases run out ttl
      // after the last good one, whatever the backoff.
      errorBackoffMs: { min: heartbeatMs, max: heartbeatMs },
      group: options.loops,
    });
    this.heartbeatMs = heartbeatMs;
    this.ttlMs = ttlMs;
    this.clock = clock;
    this.logger = logger;
    this.startedAt = clock.now();
  }

  get nodeId(): string {
    return this.options.nodeId;
  }

  /**
   * Shards this node may claim now: those it owned at its last successful heartbeat, or
   * none once that heartbeat is older than the lease (a node cut off from the database
   * stops claiming its shards before another node adopts them).
   */
  owned(now: number = this.clock.now()): readonly number[] {
    return now < this.validUntil ? this.current : [];
  }

  /**
   * One heartbeat at `now` (default: the clock). In the steady state it is one statement
   * (record the heartbeat, renew the leases, read the live nodes); a second one moves
   * shards only when the assignment differs from what this node holds.
   */
  override async runOnce(now: number = this.clock.now()): Promise<HeartbeatResult> {
    const me = this.options.nodeId;
    const { pool, sql } = this.ctx;
    try {
      const startedAt = this.liveness ? this.liveness.incarnation : this.startedAt;
      // Registered while its peers cannot watch it, this node would be taken for dead.
      if (startedAt === null) throw new Error("the liveness lock is not held (reconnecting)");
      const beat = await pool.query<{
        nodes: string[];
        peer_ids: string[];
        peer_started: number[];
        renewed: number[] | null;
      }>(sql.shardHeartbeat, [me, now, this.ttlMs, startedAt]);
      const row = beat.rows[0]!;
      const peers = row.peer_ids.map((nodeId, i) => ({
        nodeId,
        startedAt: Number(row.peer_started[i]),
      }));
      const moved = await this.move(row.nodes, row.renewed ?? [], now);
      const before = new Set(this.current);
      const acquired = moved.owned.filter((x) => !before.has(x));
      // What owned() says at this moment (the clock's now, not the pass's: a heartbeat slow
      // to answer may end after the trust ran out): nothing, if failed heartbeats outlasted
      // the trust. The same shards trusted again are a change too: a watcher that found
      // nothing to claim meanwhile sleeps until told (up to its maxIdleMs).
      const claimable = this.owned();
      // Stop trusting the leases a heartbeat before they run out for everyone else.
      this.validUntil = now + this.ttlMs - this.heartbeatMs;
      const changed = moved.owned.join(",") !== claimable.join(",");
      this.current = Object.freeze([...moved.owned]);
      if (changed) this.options.onChange?.(this.current);
      this.liveness?.watch(peers);
      if (this.liveness && (!this.announced || moved.released.length > 0)) {
        // A join or a release: the others heartbeat now instead of at their next beat.
        await pool.query(sql.nodesChanged, [sql.notifyChannel]);
        this.announced = true;
      }
      return {
        owned: this.current,
        acquired,
        released: moved.released,
        nodes: row.nodes,
        peers,
      };
    } catch (err) {
      throw new Error(`shard lease heartbeat of ${me}`, { cause: err });
    }
  }

  /** Moves this node's leases to its assigned shards when they differ from the renewed. */
  private async move(
    nodes: readonly string[],
    renewed: number[],
    now: number,
  ): Promise<{ owned: number[]; released: number[] }> {
    const me = this.options.nodeId;
    const target = assignShards(nodes, this.ctx.shardCount).get(me) ?? [];
    if (target.join(",") === renewed.join(",")) return { owned: renewed, released: [] };
    const moved = await this.ctx.pool.query<{ released: number[] | null; held: number[] | null }>(
      this.ctx.sql.shardsMove,
      [me, now, this.ttlMs, target],
    );
    return { owned: moved.rows[0]!.held ?? [], released: moved.rows[0]!.released ?? [] };
  }

  /**
   * A peer's liveness lock was released: takes that incarnation over if the registry
   * still names it (its registry row and shard leases go, its claims' leases end now),
   * then heartbeats at once to adopt its shards. Every node whose waiter was granted does
   * this; the statement is conditional, so only the first changes anything.
   */
  private async takeOver(peer: NodeIncarnation): Promise<void> {
    const { pool, sql } = this.ctx;
    const now = this.clock.now();
    const r = await pool.query<{ gone: number; shards: number; claims: number }>(sql.nodeTakeover, [
      peer.nodeId,
      peer.startedAt,
      now,
      sql.notifyChannel,
    ]);
    const { gone, shards, claims } = r.rows[0]!;
    if (gone > 0) {
      this.logger.warn(
        { peer: peer.nodeId, shards, claims },
        "took over a dead node: its shard leases freed, its claims' leases ended",
      );
    }
    if (claims > 0) this.options.onPeerLost?.();
    await this.runNow();
  }

  /** The liveness lock was lost: trust no shard until registered again with a new one. */
  private suspend(): void {
    this.validUntil = 0;
    if (this.current.length === 0) return;
    this.current = Object.freeze([]);
    this.options.onChange?.(this.current);
  }

  /**
   * Takes the liveness lock and starts watching the peers (with `detectDeadNodes`), then
   * heartbeats once (so the node owns its shards when this resolves; a failure is logged
   * and retried), then every heartbeatMs on the clock, until stop().
   */
  override async start(): Promise<void> {
    if (this.options.detectDeadNodes !== false && !this.liveness) {
      this.announced = false;
      this.liveness = new NodeLiveness({
        newClient: this.ctx.sessionClient,
        sql: this.ctx.sql,
        schema: this.ctx.schema,
        nodeId: this.options.nodeId,
        clock: this.clock,
        logger: this.logger,
        loops: this.options.loops,
        // A new incarnation: announced, so the peers watch its lock at once.
        onHeld: () => {
          this.announced = false;
          void this.runNow();
        },
        onLost: () => this.suspend(),
        onPeerGone: (peer) => this.takeOver(peer),
      });
      this.unsubscribe = this.ctx.notifier.subscribeNodes(() => void this.runNow(), {
        clock: this.clock,
        logger: this.logger,
      });
      await this.liveness.start();
    }
    return this.startNow();
  }

  /**
   * Stops heartbeating, hands back every shard and leaves the registry, then releases the
   * liveness lock. The node stops trusting its shards first, whatever happens: if the
   * statement fails (the database is down), the error is thrown and the leases run out by
   * themselves after ttl (or are taken over at once, the lock being released anyway).
   */
  override async stop(): Promise<void> {
    await super.stop();
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.current = Object.freeze([]);
    this.validUntil = 0;
    try {
      await this.ctx.pool.query(this.ctx.sql.shardsLeave, [
        this.options.nodeId,
        this.ctx.sql.notifyChannel,
      ]);
    } catch (err) {
      throw new Error(`handing back the shard leases of ${this.options.nodeId}`, { cause: err });
    } finally {
      const liveness = this.liveness;
      this.liveness = null;
      await liveness?.stop();
      this.options.onChange?.(this.current);
    }
  }
}

/** Validates the heartbeat and ttl options and resolves their defaults. */
function resolveTiming(o: ShardLeasesOptions): { heartbeatMs: number; ttlMs: number } {
  if (typeof o.nodeId !== "string" || o.nodeId === "" || o.nodeId.length > 200) {
    throw new InvalidOptionError(
      "nodeId",
      "a non-empty string of at most 200 characters",
      o.nodeId,
    );
  }
  const heartbeatMs = o.heartbeatMs ?? DEFAULT_SHARD_HEARTBEAT_MS;
  const ttlMs = o.ttlMs ?? 3 * heartbeatMs;
  if (!Number.isInteger(heartbeatMs) || heartbeatMs < 10) {
    throw new InvalidOptionError("heartbeatMs", "an integer of at least 10", heartbeatMs);
  }
  if (!Number.isInteger(ttlMs) || ttlMs <= heartbeatMs) {
    throw new InvalidOptionError("ttlMs", `an integer above heartbeatMs (${heartbeatMs})`, ttlMs);
  }
  return { heartbeatMs, ttlMs };
}

/**
 * The assignment every node computes alike from the sorted live node list: each shard,
 * in order, goes to the node ranking highest for it (a hash of node and shard) that still
 * has room under ceil(shards / nodes). Balanced, and stable: most shards keep their node
 * when a node joins or leaves.
 */
export function assignShards(nodes: readonly string[], shardCount: number): Map<string, number[]> {
  const out = new Map<string, number[]>(nodes.map((n) => [n, []]));
  if (nodes.length === 0) return out;
  const cap = Math.ceil(shardCount / nodes.length);
  for (let shard = 0; shard < shardCount; shard++) {
    const ranked = [...nodes].sort((a, b) => score(b, shard) - score(a, shard) || (a < b ? -1 : 1));
    for (const n of ranked) {
      const list = out.get(n)!;
      if (list.length < cap) {
        list.push(shard);
        break;
      }
    }
  }
  return out;
}

function score(node: string, shard: number): number {
  let h = 0x811c9dc5;
  const text = `${node}#${shard}`;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}
