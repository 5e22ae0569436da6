import type { NodeServices, NodeStartParams } from "../../store/store.js";
import { PartitionMaintenance } from "./partition-maintenance.js";
import type { PostgresStore } from "./postgres-store.js";
import { ShardLeases } from "./shard-leases.js";

/**
 * What a firing node needs beside the engine on PostgreSQL: shard leases (which shards this
 * node claims, rebalanced as nodes come and go) and partition maintenance (partitions created
 * ahead, empty past ones dropped). Every node runs both; the maintenance passes are
 * idempotent and serialised by the database.
 */
export async function startPostgresNode(
  store: PostgresStore,
  params: NodeStartParams,
): Promise<NodeServices> {
  const leases = new ShardLeases(store, {
    nodeId: params.nodeId,
    onChange: params.onShardsChange,
    onError: params.onError,
  });
  const maintenance = new PartitionMaintenance(store, { onError: params.onError });
  // start() beats once before resolving, so the node claims its shards at once.
  await leases.start();
  maintenance.start();
  return {
    shards: () => leases.owned(),
    async stop() {
      await Promise.all([leases.stop(), maintenance.stop()]);
    },
  };
}
