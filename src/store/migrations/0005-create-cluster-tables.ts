/**
 * 0005: what several nodes on one store need (src/cluster/).
 *  - nodes: the node registry. Every running node upserts its row at start and writes
 *    `last_seen_at` every cluster.heartbeatInterval; `stopped_at` is set when it stops cleanly.
 *    `instance` is the lease-holder name of the node's current life (node id + start token).
 *  - cluster_leases: one row per singleton duty (the sweeps and the retention purge of a data
 *    center): who holds it and until when. A holder renews it while it runs; when it stops or
 *    dies, another node takes the duty over once `lease_until` has passed.
 *  - the dialect's work signals (PostgreSQL: triggers that NOTIFY the other nodes when a job
 *    waits to be rendered, a recipient becomes due or a call ends, and a notification is due).
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("nodes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("instance", "text", (c) => c.notNull())
    .addColumn("region", "text", (c) => c.notNull())
    .addColumn("datacenter", "text", (c) => c.notNull())
    .addColumn("roles", "text", (c) => c.notNull())
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("hostname", "text", (c) => c.notNull())
    .addColumn("pid", "integer", (c) => c.notNull())
    .addColumn("api_url", "text")
    .addColumn("started_at", t.timestamp, (c) => c.notNull())
    .addColumn("last_seen_at", t.timestamp, (c) => c.notNull())
    .addColumn("stopped_at", t.timestamp)
    .addColumn("active_calls", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("nodes_datacenter_idx").on("nodes").columns(["datacenter", "last_seen_at"]).execute();

  await db.schema
    .createTable("cluster_leases")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("lease_until", t.timestamp, (c) => c.notNull())
    .addColumn("acquired_at", t.timestamp, (c) => c.notNull())
    .addColumn("renewed_at", t.timestamp, (c) => c.notNull())
    .execute();

  await t.installWorkSignals(db);
}
