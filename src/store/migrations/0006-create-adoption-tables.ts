/**
 * 0006: data-center failover (src/cluster/datacenter-adoption.ts).
 *  - jobs.accepted_datacenter: the data center that accepted the job (its 201). `datacenter`
 *    stays the owner (the one that sends, reports, pushes and purges it), which an adoption
 *    moves; this one never changes. Existing jobs were accepted where they are.
 *  - job_adoptions: one row per job and adoption ("adopted by DE2 from DE1 at …"), shown in the
 *    report's extended view; deleted with its job.
 *  - datacenter_adoptions: one row per adoption run (automatic failover or `faxline datacenter
 *    adopt`): who, from where to where, when, how much moved.
 */
import { sql, type Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("accepted_datacenter", "text").execute();
  await sql`update jobs set accepted_datacenter = datacenter`.execute(db);

  await db.schema
    .createTable("datacenter_adoptions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("region", "text", (c) => c.notNull())
    .addColumn("from_datacenter", "text", (c) => c.notNull())
    .addColumn("to_datacenter", "text", (c) => c.notNull())
    /** failover (the data center was dead) or manual (faxline datacenter adopt). */
    .addColumn("mode", "text", (c) => c.notNull())
    .addColumn("node", "text", (c) => c.notNull())
    .addColumn("adopted_at", t.timestamp, (c) => c.notNull())
    .addColumn("jobs", "integer", (c) => c.notNull())
    .addColumn("open_jobs", "integer", (c) => c.notNull())
    .addColumn("recipients", "integer", (c) => c.notNull())
    .addColumn("notifications", "integer", (c) => c.notNull())
    /** When the last heartbeat of the dead data center was written (failover), or null. */
    .addColumn("last_seen_at", t.timestamp)
    .execute();

  await db.schema
    .createTable("job_adoptions")
    .addColumn("job_id", "text", (c) => c.notNull().references("jobs.id").onDelete("cascade"))
    .addColumn("adoption_id", "text", (c) => c.notNull())
    .addColumn("from_datacenter", "text", (c) => c.notNull())
    .addColumn("to_datacenter", "text", (c) => c.notNull())
    .addColumn("adopted_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("job_adoptions_pk", ["job_id", "adoption_id"])
    .execute();
}
