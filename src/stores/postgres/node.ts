import type { NodeServices, NodeStartParams } from "../../store/store.js";
import type { PostgresContext } from "./context.js";
import { PartitionMaintenance } from "./partition-maintenance.js";
import { ShardLeases } from "./shard-leases.js";

/** The node services' intervals, from the store's options (see PostgresStoreOptions). */
export interface NodeTiming {
  /** Pause between shard-lease heartbeats, ms; undefined: ShardLeases' default. */
  readonly shardHeartbeatMs: number | undefined;
  /** Pause between partition maintenance passes, ms; undefined: its default. */
  readonly maintenanceIntervalMs: number | undefined;
}

/**
 * What a firing node needs beside the engine on PostgreSQL: shard leases (which shards this
 * node claims, rebalanced as nodes come and go) and partition maintenance (partitions created
 * ahead, empty past ones dropped). Every node runs both, on the engine's clock and logger;
 * the maintenance passes are idempotent and serialised by the database.
 */
export async function startPostgresNode(
  ctx: PostgresContext,
  params: NodeStartParams,
  timing: NodeTiming,
): Promise<NodeServices> {
  const { clock, logger } = params;
  const leases = new ShardLeases(ctx, {
    nodeId: params.nodeId,
    clock,
    logger,
    onChange: params.onShardsChange,
    loops: params.loops,
    ...(params.onPeerLost === undefined ? {} : { onPeerLost: params.onPeerLost }),
    ...(timing.shardHeartbeatMs === undefined ? {} : { heartbeatMs: timing.shardHeartbeatMs }),
  });
  const maintenance = new PartitionMaintenance(ctx, {
    clock,
    logger,
    loops: params.loops,
    ...(timing.maintenanceIntervalMs === undefined
      ? {}
      : { intervalMs: timing.maintenanceIntervalMs }),
  });
  // start() beats once before resolving, so the node claims its shards at once.
  await leases.start();
  maintenance.start();
  return {
    shards: () => leases.owned(),
    async stop() {
      // Both stop whatever the other does; the first failure is reported.
      const [a, b] = await Promise.allSettled([leases.stop(), maintenance.stop()]);
      for (const r of [a, b]) if (r.status === "rejected") throw r.reason;
    },
  };
}
