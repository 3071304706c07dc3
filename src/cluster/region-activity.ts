/**
 * What the region's nodes are doing, as the store knows it, for the console's live charts
 * (metrics/metrics-history.ts): the calls each running node of the region reported at its last
 * heartbeat, and the open work of each of the region's data centers.
 */
import type { Kysely } from "kysely";
import type { RegionReading } from "../metrics/metrics-history.ts";
import type { Database } from "../store/database.ts";
import { listNodes } from "../store/queries/nodes.ts";
import { openWork } from "../store/queries/queue-depths.ts";
import { nodeStatus } from "./node-registry.ts";

export async function readRegionActivity(
  db: Kysely<Database>,
  options: { region: string; datacenters: readonly string[]; heartbeatMs: number; now: number },
): Promise<RegionReading> {
  const [nodes, queues] = await Promise.all([listNodes(db), openWork(db, options.datacenters, options.now)]);
  const calls: Record<string, number> = {};
  for (const n of nodes) {
    if (n.region === options.region && nodeStatus(n, options.now, options.heartbeatMs) === "running") calls[n.id] = n.active_calls;
  }
  return { calls, queues };
}
