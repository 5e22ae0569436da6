import { InvalidOptionError } from "../../core/errors.js";
import type { PostgresStore } from "./postgres-store.js";

/** Options of a node's shard leases. */
export interface ShardLeasesOptions {
  /** This node's id, unique among the nodes sharing the schema. Required. */
  readonly nodeId: string;
  /**
   * Pause between heartbeats in ms. Default 1,000: one short statement a second per node
   * buys a dead node's shards served again within about ttl + one heartbeat (4 s).
   */
  readonly heartbeatMs?: number;
  /**
   * How long a node (and its shard leases) stays alive without a heartbeat, in ms: a dead
   * node's shards are adopted this long after its last heartbeat, on the other nodes' next
   * one. Default 3 heartbeats.
   */
  readonly ttlMs?: number;
  /** The clock, epoch ms. Nodes' clocks must agree to well within ttlMs - heartbeatMs. Default Date.now. */
  readonly now?: () => number;
  /** Called with the new set of owned shards whenever it changes. */
  readonly onChange?: (shards: readonly number[]) => void;
  /** Errors of a heartbeat (the loop carries on; leases run out if it keeps failing). */
  readonly onError?: (error: Error) => void;
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
 * owners release on their next heartbeat, it takes them on its next); a dead node's
 * shards are adopted within ttl + one heartbeat; a node stopping cleanly releases at once.
 * Pass `() => leases.owned()` as the engine's `shards` option.
 */
export class ShardLeases {
  private readonly heartbeatMs: number;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private current: readonly number[] = [];
  private validUntil = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private started = false;

  constructor(
    private readonly store: PostgresStore,
    private readonly options: ShardLeasesOptions,
  ) {
    if (
      typeof options.nodeId !== "string" ||
      options.nodeId === "" ||
      options.nodeId.length > 200
    ) {
      throw new InvalidOptionError(
        "nodeId",
        "a non-empty string of at most 200 characters",
        options.nodeId,
      );
    }
    this.heartbeatMs = options.heartbeatMs ?? 1000;
    this.ttlMs = options.ttlMs ?? 3 * this.heartbeatMs;
    if (!Number.isInteger(this.heartbeatMs) || this.heartbeatMs < 10) {
      throw new InvalidOptionError("heartbeatMs", "an integer of at least 10", this.heartbeatMs);
    }
    if (!Number.isInteger(this.ttlMs) || this.ttlMs <= this.heartbeatMs) {
      throw new InvalidOptionError(
        "ttlMs",
        `an integer above heartbeatMs (${this.heartbeatMs})`,
        this.ttlMs,
      );
    }
    this.now = options.now ?? Date.now;
  }

  get nodeId(): string {
    return this.options.nodeId;
  }

  /**
   * Shards this node may claim now: those it owned at its last successful heartbeat, or
   * none once that heartbeat is older than the lease (a node cut off from the database
   * stops claiming its shards before another node adopts them).
   */
  owned(now: number = this.now()): readonly number[] {
    return now < this.validUntil ? this.current : [];
  }

  /**
   * One heartbeat at `now` (default: the clock). In the steady state it is one statement
   * (record the heartbeat, renew the leases, read the live nodes); a second one moves
   * shards only when the assignment differs from what this node holds.
   */
  async runOnce(now: number = this.now()): Promise<HeartbeatResult> {
    const s = `"${this.store.schema}"`;
    const me = this.options.nodeId;
    const pool = this.store.connection;
    try {
      // Nodes whose ttl ran out are forgotten by whoever beats first; their leases run out
      // on their own (same ttl) and are taken over by the upsert below.
      const beat = await pool.query<{ nodes: string[]; renewed: number[] | null }>(
        `WITH me AS (
           INSERT INTO ${s}.nodes (node_id, started_at, heartbeat_at, expires_at)
           VALUES ($1, $2::bigint, $2::bigint, $2::bigint + $3::bigint)
           ON CONFLICT (node_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at,
             expires_at = excluded.expires_at
         ), dead AS (
           DELETE FROM ${s}.nodes WHERE expires_at <= $2::bigint AND node_id <> $1
         ), renewed AS (
           UPDATE ${s}.shard_leases SET expires_at = $2::bigint + $3::bigint
           WHERE owner = $1 AND expires_at > $2::bigint
           RETURNING shard
         )
         SELECT ARRAY(SELECT node_id FROM ${s}.nodes WHERE expires_at > $2::bigint AND node_id <> $1
                      UNION SELECT $1 ORDER BY 1) AS nodes,
                (SELECT array_agg(shard ORDER BY shard) FROM renewed) AS renewed`,
        [me, now, this.ttlMs],
      );
      const nodes = beat.rows[0]!.nodes;
      const renewed = beat.rows[0]!.renewed ?? [];
      const target = assignShards(nodes, this.store.shardCount).get(me) ?? [];
      let owned = renewed;
      let released: number[] = [];
      if (target.join(",") !== renewed.join(",")) {
        const moved = await pool.query<{ released: number[] | null; held: number[] | null }>(
          `WITH rel AS (
             DELETE FROM ${s}.shard_leases WHERE owner = $1 AND NOT (shard = ANY($4::int[]))
             RETURNING shard
           ), held AS (
             INSERT INTO ${s}.shard_leases AS l (shard, owner, expires_at, acquired_at)
             SELECT t, $1, $2::bigint + $3::bigint, $2::bigint FROM unnest($4::int[]) AS t
             ON CONFLICT (shard) DO UPDATE SET owner = excluded.owner,
               expires_at = excluded.expires_at,
               acquired_at = CASE WHEN l.owner = excluded.owner THEN l.acquired_at
                                  ELSE excluded.acquired_at END
             WHERE l.owner = excluded.owner OR l.expires_at <= $2::bigint
             RETURNING shard
           )
           SELECT (SELECT array_agg(shard ORDER BY shard) FROM rel) AS released,
                  (SELECT array_agg(shard ORDER BY shard) FROM held) AS held`,
          [me, now, this.ttlMs, target],
        );
        released = moved.rows[0]!.released ?? [];
        owned = moved.rows[0]!.held ?? [];
      }
      const before = new Set(this.current);
      const acquired = owned.filter((x) => !before.has(x));
      // Stop trusting the leases a heartbeat before they run out for everyone else.
      this.validUntil = now + this.ttlMs - this.heartbeatMs;
      const changed = owned.join(",") !== this.current.join(",");
      this.current = Object.freeze([...owned]);
      if (changed) this.options.onChange?.(this.current);
      return { owned: this.current, acquired, released, nodes };
    } catch (err) {
      throw new Error(`shard lease heartbeat of ${me}`, { cause: err });
    }
  }

  /** Heartbeats now and then every heartbeatMs (with jitter), until stop(). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.beat();
  }

  /** Stops heartbeating, hands back every shard and leaves the registry. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    this.current = Object.freeze([]);
    this.validUntil = 0;
    const s = `"${this.store.schema}"`;
    await this.store.connection.query(
      `WITH l AS (DELETE FROM ${s}.shard_leases WHERE owner = $1)
       DELETE FROM ${s}.nodes WHERE node_id = $1`,
      [this.options.nodeId],
    );
    this.options.onChange?.(this.current);
  }

  private async beat(): Promise<void> {
    const run = this.runOnce().catch((err: unknown) => {
      this.options.onError?.(err instanceof Error ? err : new Error(String(err)));
    });
    this.running = run;
    await run;
    this.running = null;
    if (!this.started) return;
    this.timer = setTimeout(() => void this.beat(), this.heartbeatMs * (0.9 + Math.random() * 0.2));
    this.timer.unref();
  }
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
